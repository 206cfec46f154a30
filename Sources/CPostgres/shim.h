#include <libpq-fe.h>
/* PG_DIAG_SQLSTATE is a character-literal macro Swift cannot import. */
static inline int cpostgres_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }
