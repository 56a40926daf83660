// Placeholder entry point until the toolkit lands.
int main() { return 0; }
