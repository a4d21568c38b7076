/* What a service asks of the image it runs in, printed one fact a line for tests/runtime.
 *   service facts         its user (getpwuid), the certificates at OpenSSL's default file, a time zone
 *   service connect PORT  a TLS connection to 127.0.0.1:PORT, verified against the default paths as localhost */
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int facts(void) {
  const struct passwd* pw = getpwuid(getuid());
  printf("uid=%u user=%s\n", (unsigned)getuid(), pw ? pw->pw_name : "(none)");
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  const int paths = ctx != NULL && SSL_CTX_set_default_verify_paths(ctx) == 1;
  int certs = 0;
  FILE* f = fopen(X509_get_default_cert_file(), "r");
  if (f != NULL) {
    X509* x;
    while ((x = PEM_read_X509(f, NULL, NULL, NULL)) != NULL) {
      ++certs;
      X509_free(x);
    }
    fclose(f);
  }
  printf("verify_paths=%d certs=%d file=%s\n", paths, certs, X509_get_default_cert_file());
  setenv("TZ", "Europe/Berlin", 1);
  tzset();
  const time_t summer = 1719835200; /* 2024-07-01 12:00 UTC */
  struct tm tm;
  char zone[16];
  localtime_r(&summer, &tm);
  strftime(zone, sizeof zone, "%Z", &tm);
  printf("tz=%s\n", zone);
  FILE* tmp = fopen("/tmp/written", "w");
  printf("tmp=%s\n", tmp != NULL ? "writable" : "not writable");
  SSL_CTX_free(ctx);
  return 0;
}

static int connect_to(const char* port) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_default_verify_paths(ctx);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
  char address[64];
  snprintf(address, sizeof address, "127.0.0.1:%s", port);
  BIO* bio = BIO_new_ssl_connect(ctx);
  SSL* ssl = NULL;
  BIO_get_ssl(bio, &ssl);
  SSL_set_tlsext_host_name(ssl, "localhost");
  SSL_set1_host(ssl, "localhost");
  BIO_set_conn_hostname(bio, address);
  if (BIO_do_handshake(bio) <= 0) {
    const long result = SSL_get_verify_result(ssl);
    printf("not verified: %s\n", result != X509_V_OK ? X509_verify_cert_error_string(result) : "handshake failed");
    return 1;
  }
  printf("verified %s\n", address);
  BIO_free_all(bio);
  SSL_CTX_free(ctx);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "facts") == 0) return facts();
  if (argc == 3 && strcmp(argv[1], "connect") == 0) return connect_to(argv[2]);
  fprintf(stderr, "usage: service facts | service connect PORT\n");
  return 2;
}
