/* weft — task-parallel runtime for C11.  SPDX-License-Identifier: MIT */
#ifndef WEFT_VERSION_H
#define WEFT_VERSION_H

#include "weft/common.h"

/* The headers' major version, 0 before 1.0.  From 1.0 on it changes when the
 * API or ABI breaks, and the SONAME carries it (docs/versioning.md).  Always
 * equal to project()'s in CMakeLists.txt (checked at configure). */
#define WEFT_VERSION_MAJOR 0
/* The minor version: from 1.0 on, additions only; before 1.0 it may change
 * the API and ABI, and the SONAME (libweft.so.0.MINOR) carries it. */
#define WEFT_VERSION_MINOR 1
/* The patch version: fixes only; the API and ABI stay. */
#define WEFT_VERSION_PATCH 0
/* One comparable number: 0x00MMmmpp. */
#define WEFT_VERSION ((WEFT_VERSION_MAJOR << 16) | (WEFT_VERSION_MINOR << 8) | WEFT_VERSION_PATCH)

WEFT_EXTERN_C_BEGIN

/* The version of the library actually linked, as "MAJOR.MINOR.PATCH".
 * Compare with WEFT_VERSION to detect a header/library mismatch. Any thread. */
WEFT_API const char *weft_version(void);
/* The linked library's WEFT_VERSION number. Any thread. */
WEFT_API unsigned weft_version_number(void);

WEFT_EXTERN_C_END
#endif
