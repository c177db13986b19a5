/* weft — task-parallel runtime for C11.  SPDX-License-Identifier: MIT */
#ifndef WEFT_VERSION_H
#define WEFT_VERSION_H

#include "weft/common.h"

#define WEFT_VERSION_MAJOR 0
#define WEFT_VERSION_MINOR 1
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
