/* What the cancellation tests share. */
#ifndef WEFT_TESTS_CANCEL_TEST_H
#define WEFT_TESTS_CANCEL_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>

#include "test_util.h"

/* A fresh token without a parent (the test fails if it cannot be made). */
static inline weft_cancel_token *new_token(void) {
    weft_status st;
    weft_cancel_token *t = weft_cancel_token_create(NULL, &st);
    ASSERT_OK(st);
    return t;
}

#endif
