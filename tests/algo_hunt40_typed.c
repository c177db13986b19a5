/* The algo_typed.h macros expanded in a user's own .c file, compiled (not run)
 * by the test algo.typed_macros_expanded_in_a_user_file_are_warning_free with
 * -Wall -Wextra -Werror, by clang too: clang warns of an unused static
 * function defined in the main file, which is where a macro's expansion
 * lands.  WEFT_ALGO_SORT_NANS_LAST left an internal kernel its sorts never
 * call (name__num__sort_block), so no user file that expanded it built with
 * clang -Wall -Werror; and a user who needs one of the two sorts a macro
 * defines (name_sort, not name_stable_sort), or only the inclusive scan, got
 * a warning for the other.  Each generated function is marked unused, as
 * forkjoin.h's typed macros are. */
#include <weft/algo_typed.h>

typedef struct pt { int key; float w; } pt;
#define PT_LT(a, b) ((a).key < (b).key)
static pt pt_add(pt a, pt b) {
    pt r = { a.key + b.key, a.w + b.w };
    return r;
}
WEFT_ALGO_SORT(user_pt, pt, PT_LT)
WEFT_ALGO_REDUCE(user_pt, pt, pt_add)
WEFT_ALGO_SCAN(user_pt, pt, pt_add)
WEFT_ALGO_SORT_NANS_LAST(user_ld, long double)

int main(void) {
    pt a[3] = { { 3, 1 }, { 1, 2 }, { 2, 3 } }, out[3];
    long double l[3] = { 3, 1, 2 };
    int bad = 0;
    /* one of each pair: the other must not warn */
    bad |= user_pt_sort(NULL, a, 3, NULL);
    bad |= user_pt_inclusive_scan(NULL, a, out, 3, NULL, NULL);
    bad |= user_ld_stable_sort(NULL, l, 3, NULL);
    return bad != 0;
}
