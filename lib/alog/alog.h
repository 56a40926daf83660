// Everything public, in one include.
#pragma once

#include "alog/crc32c.h"
#include "alog/format.h"
#include "alog/fs.h"
#include "alog/inspect.h"
#include "alog/interrupt.h"
#include "alog/log.h"
#include "alog/rendered_scan.h"
#include "alog/retention.h"
#include "alog/scanner.h"
#include "alog/status.h"
#include "alog/verify.h"
#include "alog/write_plan.h"
#include "alog/writer.h"
