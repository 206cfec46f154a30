#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/bn.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/objects.h>
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/pkcs7.h>

/* Helpers for libcrypto macros (function-like or with casts) that Swift cannot import. */

static inline unsigned long depot_xn_flag_rfc2253(void) { return XN_FLAG_RFC2253; }
static inline int depot_mbstring_asc(void) { return MBSTRING_ASC; }
static inline long depot_bio_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }
static inline void depot_openssl_free(void *pointer) { OPENSSL_free(pointer); }

static inline STACK_OF(X509) *depot_sk_x509_new_null(void) { return sk_X509_new_null(); }
static inline int depot_sk_x509_push(STACK_OF(X509) *stack, X509 *cert) { return sk_X509_push(stack, cert); }
static inline int depot_sk_x509_num(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
static inline X509 *depot_sk_x509_value(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }
/* Frees the stack only; the certificates stay owned by their Swift wrappers. */
static inline void depot_sk_x509_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }
/* Frees the stack and drops one reference of every certificate in it. */
static inline void depot_sk_x509_pop_free(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }

/* Wipes and frees memory libcrypto allocated for secret bytes (a decoded private key). */
static inline void depot_openssl_clear_free(void *pointer, size_t length) { OPENSSL_clear_free(pointer, length); }

/* The encapsulated content of a PKCS#7 SignedData whose content type is `data`, or NULL for any other
   shape (not SignedData, detached content, nested non-data content). The string stays owned by `p7`. */
static inline const ASN1_OCTET_STRING *depot_pkcs7_signed_data_content(PKCS7 *p7) {
    if (p7 == NULL || !PKCS7_type_is_signed(p7) || p7->d.sign == NULL) return NULL;
    PKCS7 *inner = p7->d.sign->contents;
    if (inner == NULL || !PKCS7_type_is_data(inner)) return NULL;
    return inner->d.data;
}
