/*
 * The emulator's IAM database authentication, on the servers' side: one shared object that is
 * both the MariaDB server's AWSAuthenticationPlugin and a PAM module for PostgreSQL. Either way
 * the token the client sent in place of a password goes to the emulator's one checker
 * (check.py) on its stdin, with the user in PAM_USER; the checker's exit status decides.
 *
 * - MariaDB: AWSAuthenticationPlugin is what RDS for MySQL and MariaDB name the plugin of a user
 *   that logs in with a token ("CREATE USER jane_doe IDENTIFIED WITH AWSAuthenticationPlugin AS
 *   'RDS';", https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/UsingWithRDS.IAMDBAuth.DBAccounts.html).
 *   The client sends the token in clear (the mysql_clear_password client plugin, which is why RDS's
 *   examples pass --enable-cleartext-plugin: UsingWithRDS.IAMDBAuth.Connecting.AWSCLI.html). The
 *   checker, the emulator and this server come from the server's environment, set by engines.py:
 *   RDS_IAM_CHECKER, RDS_IAM_URL, RDS_IAM_SERVER.
 * - PostgreSQL: members of rds_iam log in through PAM (pg_hba.conf "pam"), whose service file
 *   names this module with the checker, the emulator and the server as its arguments. A module of
 *   its own rather than pam_exec: pam_exec cuts a password at 512 bytes, and a token signed with
 *   temporary credentials is longer.
 *
 * The declarations below are MariaDB 10.11's plugin ABI (include/mysql/plugin.h, plugin_auth.h,
 * plugin_auth_common.h: interface versions 0x010f and 0x0202) and Linux-PAM's (security/_pam_types.h,
 * pam_modules.h), written out so the object builds with gcc alone, without the 95 MB server
 * development package. libpam's functions are weak: mariadbd, which has no libpam, loads it too.
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MARIA_PLUGIN_INTERFACE_VERSION 0x010f
#define MYSQL_AUTHENTICATION_PLUGIN 7
#define MYSQL_AUTHENTICATION_INTERFACE_VERSION 0x0202
#define MYSQL_USERNAME_LENGTH 512
#define PLUGIN_LICENSE_GPL 1
#define MariaDB_PLUGIN_MATURITY_STABLE 5
#define CR_ERROR 0
#define CR_OK -1
#define PASSWORD_USED_YES 1

typedef struct st_plugin_vio {
  int (*read_packet)(struct st_plugin_vio *vio, unsigned char **buf);
  int (*write_packet)(struct st_plugin_vio *vio, const unsigned char *packet, int packet_len);
  void (*info)(struct st_plugin_vio *vio, void *info);
} MYSQL_PLUGIN_VIO;

typedef struct st_mysql_server_auth_info {
  const char *user_name;
  unsigned int user_name_length;
  const char *auth_string;
  unsigned long auth_string_length;
  char authenticated_as[MYSQL_USERNAME_LENGTH + 1];
  char external_user[MYSQL_USERNAME_LENGTH + 1];
  int password_used;
  const char *host_or_ip;
  unsigned int host_or_ip_length;
  void *thd;
} MYSQL_SERVER_AUTH_INFO;

struct st_mysql_auth {
  int interface_version;
  const char *client_auth_plugin;
  int (*authenticate_user)(MYSQL_PLUGIN_VIO *vio, MYSQL_SERVER_AUTH_INFO *info);
  int (*hash_password)(const char *password, size_t password_length, char *hash, size_t *hash_length);
  int (*preprocess_hash)(const char *hash, size_t hash_length, unsigned char *out, size_t *out_length);
};

struct st_maria_plugin {
  int type;
  void *info;
  const char *name;
  const char *author;
  const char *descr;
  int license;
  int (*init)(void *);
  int (*deinit)(void *);
  unsigned int version;
  void *status_vars;
  void **system_vars;
  const char *version_info;
  unsigned int maturity;
};

/* Runs the checker with the token on its stdin: 1 when it exits 0. */
static int check(const char *checker, const char *url, const char *server, const char *user,
                 const char *token, size_t len) {
  if (!checker || !url || !server || !user)
    return 0;
  int fds[2];
  if (pipe(fds) != 0)
    return 0;
  size_t n = 0;
  while (environ[n])
    n++;
  char **env = calloc(n + 2, sizeof(char *));
  char *pam_user = malloc(strlen(user) + sizeof "PAM_USER=");
  if (!env || !pam_user) {
    free(env);
    free(pam_user);
    close(fds[0]);
    close(fds[1]);
    return 0;
  }
  sprintf(pam_user, "PAM_USER=%s", user);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "PAM_USER=", 9) != 0)
      env[k++] = environ[i];
  env[k++] = pam_user;
  env[k] = NULL;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], 0);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  char *argv[] = {(char *)checker, (char *)url, (char *)server, NULL};
  pid_t pid;
  int spawned = posix_spawn(&pid, checker, &actions, NULL, argv, env);
  posix_spawn_file_actions_destroy(&actions);
  free(env);
  free(pam_user);
  close(fds[0]);
  if (spawned != 0) {
    close(fds[1]);
    return 0;
  }
  ssize_t written = write(fds[1], token, len);
  close(fds[1]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return 0;
  return written == (ssize_t)len && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int authenticate(MYSQL_PLUGIN_VIO *vio, MYSQL_SERVER_AUTH_INFO *info) {
  unsigned char *packet;
  int length = vio->read_packet(vio, &packet);
  if (length < 0)
    return CR_ERROR;
  info->password_used = PASSWORD_USED_YES;
  /* The clear password packet ends with a NUL; the token is what comes before it. */
  size_t len = strnlen((const char *)packet, (size_t)length);
  return check(getenv("RDS_IAM_CHECKER"), getenv("RDS_IAM_URL"), getenv("RDS_IAM_SERVER"),
               info->user_name, (const char *)packet, len)
             ? CR_OK
             : CR_ERROR;
}

static struct st_mysql_auth descriptor = {
    MYSQL_AUTHENTICATION_INTERFACE_VERSION, "mysql_clear_password", authenticate, NULL, NULL};

int _maria_plugin_interface_version_ = MARIA_PLUGIN_INTERFACE_VERSION;
int _maria_sizeof_struct_st_plugin_ = sizeof(struct st_maria_plugin);
struct st_maria_plugin _maria_plugin_declarations_[] = {
    {MYSQL_AUTHENTICATION_PLUGIN, &descriptor, "AWSAuthenticationPlugin", "rds-operator test bed",
     "IAM database authentication tokens, checked by the emulator", PLUGIN_LICENSE_GPL, NULL, NULL,
     0x0100, NULL, NULL, "1.0", MariaDB_PLUGIN_MATURITY_STABLE},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}};

/* Linux-PAM: auth required /path/rds_iam.so CHECKER URL SERVER */
typedef struct pam_handle pam_handle_t;
struct pam_message {
  int msg_style;
  const char *msg;
};
struct pam_response {
  char *resp;
  int resp_retcode;
};
struct pam_conv {
  int (*conv)(int num_msg, const struct pam_message **msg, struct pam_response **resp, void *appdata_ptr);
  void *appdata_ptr;
};
#define PAM_SUCCESS 0
#define PAM_AUTH_ERR 7
#define PAM_CONV 5
#define PAM_PROMPT_ECHO_OFF 1

extern int pam_get_item(const pam_handle_t *pamh, int item_type, const void **item) __attribute__((weak));
extern int pam_get_user(pam_handle_t *pamh, const char **user, const char *prompt) __attribute__((weak));

int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv) {
  (void)flags;
  const char *user = NULL;
  const struct pam_conv *conv = NULL;
  if (argc != 3 || !pam_get_item || !pam_get_user || pam_get_user(pamh, &user, NULL) != PAM_SUCCESS ||
      pam_get_item(pamh, PAM_CONV, (const void **)&conv) != PAM_SUCCESS || !conv || !conv->conv)
    return PAM_AUTH_ERR;
  struct pam_message message = {PAM_PROMPT_ECHO_OFF, "Password: "};
  const struct pam_message *messages[] = {&message};
  struct pam_response *response = NULL;
  if (conv->conv(1, messages, &response, conv->appdata_ptr) != PAM_SUCCESS || !response)
    return PAM_AUTH_ERR;
  int ok = response->resp && check(argv[0], argv[1], argv[2], user, response->resp, strlen(response->resp));
  if (response->resp) {
    memset(response->resp, 0, strlen(response->resp));
    free(response->resp);
  }
  free(response);
  return ok ? PAM_SUCCESS : PAM_AUTH_ERR;
}

int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv) {
  (void)pamh, (void)flags, (void)argc, (void)argv;
  return PAM_SUCCESS;
}

int pam_sm_acct_mgmt(pam_handle_t *pamh, int flags, int argc, const char **argv) {
  (void)pamh, (void)flags, (void)argc, (void)argv;
  return PAM_SUCCESS;
}
