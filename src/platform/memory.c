/* Memory advice for large blocks. */
#include "platform/platform.h"

#include <sys/mman.h>

void weft__mem_advise_huge(void *p, size_t len) {
#ifdef MADV_HUGEPAGE
    /* Only whole huge pages inside the block; the kernel ignores the advice
     * where transparent huge pages are off, and so do we on failure. */
    uintptr_t lo = ((uintptr_t)p + WEFT__HUGE_PAGE - 1) & ~(uintptr_t)(WEFT__HUGE_PAGE - 1);
    uintptr_t hi = ((uintptr_t)p + len) & ~(uintptr_t)(WEFT__HUGE_PAGE - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)len;
#endif
}
