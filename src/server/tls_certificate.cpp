#include "server/tls_certificate.hpp"

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace punctual::server {

namespace {

struct openssl_free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
  void operator()(BIGNUM* p) const { BN_free(p); }
};
template <typename T>
using owned = std::unique_ptr<T, openssl_free>;

[[noreturn]] void openssl_failed(const char* what) {
  throw std::runtime_error(std::string("cannot make the self-signed certificate: ") + what +
                           " failed (" + openssl_reason() + ")");
}

void check(int ok, const char* what) {
  if (ok != 1) openssl_failed(what);
}

void add_extension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  const owned<X509_EXTENSION> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  if (!ext) openssl_failed(value);
  check(X509_add_ext(cert, ext.get(), -1), "X509_add_ext");
}

// A random positive 127-bit serial: two certificates of two runs never share one.
void set_random_serial(X509* cert) {
  unsigned char bytes[16];
  check(RAND_bytes(bytes, sizeof bytes), "RAND_bytes");
  bytes[0] &= 0x7f;
  const owned<BIGNUM> serial(BN_bin2bn(bytes, sizeof bytes, nullptr));
  if (!serial || !BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert))) {
    openssl_failed("the serial number");
  }
}

// Fails with a readable line when the file cannot be opened at all; OpenSSL's own message for
// that case names no file.
void check_readable(const char* option, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) {
    throw std::invalid_argument(std::string(option) + ": cannot read " + path + ": " +
                                std::strerror(errno));
  }
  std::fclose(f);
}

// An encrypted key must fail to load rather than prompt on the terminal for a passphrase.
int no_passphrase(char*, int, int, void*) {
  return 0;
}

}  // namespace

std::string openssl_reason() {
  const unsigned long code = ERR_peek_error();
  const char* reason = code ? ERR_reason_error_string(code) : nullptr;
  ERR_clear_error();
  if (reason) return reason;
  return code ? "error " + std::to_string(ERR_GET_REASON(code)) : "no reason given";
}

void use_self_signed(SSL_CTX* ctx) {
  const owned<EVP_PKEY> key(EVP_EC_gen("P-256"));
  if (!key) openssl_failed("EVP_EC_gen");
  const owned<X509> cert(X509_new());
  if (!cert) openssl_failed("X509_new");
  check(X509_set_version(cert.get(), X509_VERSION_3), "X509_set_version");
  set_random_serial(cert.get());
  if (!X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0) ||
      !X509_gmtime_adj(X509_getm_notAfter(cert.get()), self_signed_lifetime_seconds)) {
    openssl_failed("X509_gmtime_adj");
  }
  check(X509_set_pubkey(cert.get(), key.get()), "X509_set_pubkey");
  X509_NAME* name = X509_get_subject_name(cert.get());
  const auto* cn = reinterpret_cast<const unsigned char*>("localhost");
  check(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, cn, -1, -1, 0), "the subject");
  check(X509_set_issuer_name(cert.get(), name), "X509_set_issuer_name");
  // No keyUsage: with one, OpenSSL would want keyCertSign before it let the certificate vouch
  // for itself as its own trust anchor.
  add_extension(cert.get(), NID_basic_constraints, "critical,CA:FALSE");
  add_extension(cert.get(), NID_ext_key_usage, "serverAuth");
  add_extension(cert.get(), NID_subject_key_identifier, "hash");
  add_extension(cert.get(), NID_subject_alt_name, self_signed_names);
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) <= 0) openssl_failed("X509_sign");
  check(SSL_CTX_use_certificate(ctx, cert.get()), "SSL_CTX_use_certificate");
  check(SSL_CTX_use_PrivateKey(ctx, key.get()), "SSL_CTX_use_PrivateKey");
}

void use_pem_files(SSL_CTX* ctx, const std::string& cert_path, const std::string& key_path) {
  check_readable("--tls-cert", cert_path);
  check_readable("--tls-key", key_path);
  ERR_clear_error();
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_path.c_str()) != 1) {
    throw std::invalid_argument("--tls-cert: no usable PEM certificate in " + cert_path + " (" +
                                openssl_reason() + ")");
  }
  SSL_CTX_set_default_passwd_cb(ctx, no_passphrase);
  const bool loaded = SSL_CTX_use_PrivateKey_file(ctx, key_path.c_str(), SSL_FILETYPE_PEM) == 1;
  const std::string reason = loaded ? std::string() : openssl_reason();
  SSL_CTX_set_default_passwd_cb(ctx, nullptr);
  if (!loaded && reason == "key values mismatch") {
    throw std::invalid_argument("--tls-key: the key in " + key_path +
                                " does not match the certificate in " + cert_path);
  }
  if (!loaded) {
    throw std::invalid_argument("--tls-key: no usable PEM private key in " + key_path + " (" +
                                reason + ")");
  }
  // A key of another type than the certificate's loads, but sits beside no certificate.
  if (SSL_CTX_check_private_key(ctx) != 1) {
    ERR_clear_error();
    throw std::invalid_argument("--tls-key: the key in " + key_path +
                                " does not match the certificate in " + cert_path);
  }
}

}  // namespace punctual::server
