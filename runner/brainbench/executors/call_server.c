/* The in-container call server for images without Python: the same protocol and
 * semantics as call_server.py, as one static binary (built on the runner's host and
 * bind-mounted read-only into the seam container; see executors/docker/static_helper.py).
 *
 * One JSON request per stdin line, one JSON answer per stdout line, matched by "id":
 *   {"id", "hello": true}                       -> {"id", "ready": true, "argv": true, "pid"}
 *   {"cancel": id}                              -> kill that call's process group
 *   {"id", "env", "stdin", "cwd", "timeout_s", "cap"}
 *       -> {"id", "exit_code", "stdout", "stderr", "timed_out", "oversize", "run_ms"[, "infra_error"]}
 * "argv": [...] in a call runs that command instead of the hook (the runner's other commands of the
 * image: the seed contract's init, seed, write_back and operations), the same way.
 * Each call runs in its own thread: the hook (argv of this program) is fork-exec'd as a
 * fresh process in its own session, fed its stdin, read until both pipes close or the
 * deadline passes; its whole group is killed when it exits (a leaked child holding the
 * pipes ends the call), on timeout and over the output cap.  Output is JSON-escaped as
 * ASCII; bytes that are not UTF-8 travel as \udcXX (Python's surrogateescape).
 * A request may also carry {"files": {path: text}, "dirs": [path...]}, written before the hook
 * starts ({"write_only": true}: written, nothing run -> {"id", "written": true}).
 *
 * Listen mode, for a seam that is a container of its own beside the runner (a pod's sidecar):
 *   call-server --listen HOST:PORT [--token-file FILE] -- HOOK [ARG...]
 * serves the same protocol over TCP.  A connection starts with call_server.py's handshake, in
 * which the seam's token (from --token-file, else BRAINBENCH_CALL_TOKEN, which is removed from
 * the environment hooks inherit) never travels: HMAC-SHA256 proofs over a nonce from each side,
 * the server's first.  Anything else is refused; at most MAX_PENDING connections wait to
 * authenticate (a new one cuts the oldest off).  One authenticated client at a time; when it
 * hangs up, its calls are killed and their late answers dropped.  A call that cannot get a
 * thread or a process (the container at its pids limit) is answered as a hook that could not
 * start, and the server goes on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static char **hook_argv;
#define ARGV_REFUSED "call server: argv must be a non-empty list of strings"
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t calls_lock = PTHREAD_MUTEX_INITIALIZER;
/* Where answers go: stdout, or the current listen-mode client.  Every line carries the
 * generation of the session that asked; a line of an earlier session is dropped. */
static int out_fd = 1;
static unsigned long out_gen = 0;
/* The session whose calls may run (under calls_lock): stdio mode's 0, or the connected client's. */
static unsigned long live_gen = 0;
#define SLOT_GONE (-2)

#define MAX_CALLS 1024
static struct { long id; pid_t pid; int cancelled; unsigned long gen; } calls[MAX_CALLS];

/* ---- growable byte buffer ---------------------------------------------------------- */
typedef struct { char *data; size_t len, cap; } buf_t;

static void buf_add(buf_t *b, const void *src, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (b->len + n + 1 > cap) cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown) { perror("call server"); _exit(70); }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, src, n);
    b->len += n;
    b->data[b->len] = 0;
}
static void buf_str(buf_t *b, const char *s) { buf_add(b, s, strlen(s)); }
static void buf_fmt(buf_t *b, const char *fmt, ...) {
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    buf_add(b, tmp, (size_t)(n < (int)sizeof tmp ? n : (int)sizeof tmp - 1));
}

/* ---- JSON in: just what requests carry ------------------------------------------------ */
typedef struct { const char *p, *end; int bad; } cur_t;

static void ws(cur_t *c) { while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n')) c->p++; }

static void put_utf8(buf_t *b, uint32_t cp) {
    unsigned char u[4];
    if (cp >= 0xDC80 && cp <= 0xDCFF) { u[0] = (unsigned char)(cp - 0xDC00); buf_add(b, u, 1); return; }  /* surrogateescape */
    if (cp < 0x80) { u[0] = (unsigned char)cp; buf_add(b, u, 1); }
    else if (cp < 0x800) { u[0] = 0xC0 | (cp >> 6); u[1] = 0x80 | (cp & 0x3F); buf_add(b, u, 2); }
    else if (cp < 0x10000) { u[0] = 0xE0 | (cp >> 12); u[1] = 0x80 | ((cp >> 6) & 0x3F); u[2] = 0x80 | (cp & 0x3F); buf_add(b, u, 3); }
    else { u[0] = 0xF0 | (cp >> 18); u[1] = 0x80 | ((cp >> 12) & 0x3F); u[2] = 0x80 | ((cp >> 6) & 0x3F); u[3] = 0x80 | (cp & 0x3F); buf_add(b, u, 4); }
}

static int hex4(cur_t *c, uint32_t *out) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        if (c->p >= c->end) return 0;
        char h = *c->p++;
        v <<= 4;
        if (h >= '0' && h <= '9') v |= (uint32_t)(h - '0');
        else if (h >= 'a' && h <= 'f') v |= (uint32_t)(h - 'a' + 10);
        else if (h >= 'A' && h <= 'F') v |= (uint32_t)(h - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

/* A JSON string into ``out`` as bytes (NUL-terminated; may hold NULs). */
static void parse_string(cur_t *c, buf_t *out) {
    if (c->p >= c->end || *c->p != '"') { c->bad = 1; return; }
    c->p++;
    buf_add(out, "", 0);
    while (c->p < c->end && *c->p != '"') {
        if (*c->p != '\\') { buf_add(out, c->p, 1); c->p++; continue; }
        c->p++;
        if (c->p >= c->end) break;
        char e = *c->p++;
        switch (e) {
        case 'n': buf_add(out, "\n", 1); break;
        case 't': buf_add(out, "\t", 1); break;
        case 'r': buf_add(out, "\r", 1); break;
        case 'b': buf_add(out, "\b", 1); break;
        case 'f': buf_add(out, "\f", 1); break;
        case 'u': {
            uint32_t cp, lo;
            if (!hex4(c, &cp)) { c->bad = 1; return; }
            if (cp >= 0xD800 && cp <= 0xDBFF && c->end - c->p >= 6 && c->p[0] == '\\' && c->p[1] == 'u') {
                cur_t look = {c->p + 2, c->end, 0};
                if (hex4(&look, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
                    c->p = look.p;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                }
            }
            put_utf8(out, cp);
            break;
        }
        default: buf_add(out, &e, 1);
        }
    }
    if (c->p >= c->end) { c->bad = 1; return; }
    c->p++;
}

static void skip_value(cur_t *c);

static void skip_container(cur_t *c, char close) {
    c->p++;
    ws(c);
    while (c->p < c->end && *c->p != close && !c->bad) {
        if (close == '}') {
            buf_t k = {0};
            parse_string(c, &k);
            free(k.data);
            ws(c);
            if (c->p >= c->end || *c->p != ':') { c->bad = 1; return; }
            c->p++;
        }
        skip_value(c);
        ws(c);
        if (c->p < c->end && *c->p == ',') { c->p++; ws(c); }
    }
    if (c->p >= c->end) { c->bad = 1; return; }
    c->p++;
}

static void skip_value(cur_t *c) {
    ws(c);
    if (c->p >= c->end) { c->bad = 1; return; }
    if (*c->p == '"') { buf_t s = {0}; parse_string(c, &s); free(s.data); }
    else if (*c->p == '{') skip_container(c, '}');
    else if (*c->p == '[') skip_container(c, ']');
    else while (c->p < c->end && !strchr(",}] \t\r\n", *c->p)) c->p++;
}

typedef struct { buf_t path, data; } file_t;

typedef struct {
    long id, cancel;
    int has_id, has_cancel, hello, has_cwd, write_only, has_argv, argv_ok;
    double timeout_s;
    long cap;
    buf_t stdin_data, cwd, nonce, auth;
    char **env;  /* "K=V" strings */
    size_t env_n;
    buf_t *dirs;
    size_t dirs_n;
    buf_t *argv;  /* a command to run instead of the hook; argv_n 0: the hook */
    size_t argv_n;
    file_t *files;
    size_t files_n;
    unsigned long gen;
} request_t;

static int is_literal(cur_t *c, const char *lit) {
    size_t n = strlen(lit);
    if ((size_t)(c->end - c->p) >= n && memcmp(c->p, lit, n) == 0) { c->p += n; return 1; }
    return 0;
}

static double parse_number(cur_t *c) {
    char tmp[64];
    size_t n = 0;
    while (c->p < c->end && n < sizeof tmp - 1 && strchr("+-0123456789.eE", *c->p)) tmp[n++] = *c->p++;
    tmp[n] = 0;
    if (!n) c->bad = 1;
    return strtod(tmp, NULL);
}

static void parse_env(cur_t *c, request_t *r) {
    if (*c->p != '{') { skip_value(c); return; }
    c->p++;
    ws(c);
    while (c->p < c->end && *c->p != '}' && !c->bad) {
        buf_t kv = {0};
        parse_string(c, &kv);
        ws(c);
        if (c->p >= c->end || *c->p != ':') { c->bad = 1; free(kv.data); return; }
        c->p++;
        ws(c);
        buf_add(&kv, "=", 1);
        if (c->p < c->end && *c->p == '"') parse_string(c, &kv);
        else skip_value(c);
        r->env = realloc(r->env, sizeof(char *) * (r->env_n + 1));
        r->env[r->env_n++] = kv.data;
        ws(c);
        if (c->p < c->end && *c->p == ',') { c->p++; ws(c); }
    }
    if (c->p >= c->end) { c->bad = 1; return; }
    c->p++;
}

/* A JSON list's strings into ``items`` (other values skipped); 1 if it was a list of strings only. */
static int parse_strings(cur_t *c, buf_t **items, size_t *n) {
    int only_strings = 1;
    if (*c->p != '[') { skip_value(c); return 0; }
    c->p++;
    ws(c);
    while (c->p < c->end && *c->p != ']' && !c->bad) {
        if (*c->p != '"') { skip_value(c); only_strings = 0; }
        else {
            *items = realloc(*items, sizeof(buf_t) * (*n + 1));
            memset(&(*items)[*n], 0, sizeof(buf_t));
            parse_string(c, &(*items)[(*n)++]);
        }
        ws(c);
        if (c->p < c->end && *c->p == ',') { c->p++; ws(c); }
    }
    if (c->p >= c->end) { c->bad = 1; return 0; }
    c->p++;
    return only_strings;
}

static void parse_files(cur_t *c, request_t *r) {
    if (*c->p != '{') { skip_value(c); return; }
    c->p++;
    ws(c);
    while (c->p < c->end && *c->p != '}' && !c->bad) {
        file_t f;
        memset(&f, 0, sizeof f);
        parse_string(c, &f.path);
        ws(c);
        if (c->p >= c->end || *c->p != ':') { c->bad = 1; free(f.path.data); return; }
        c->p++;
        ws(c);
        if (c->p < c->end && *c->p == '"') parse_string(c, &f.data);
        else { skip_value(c); buf_add(&f.data, "", 0); }
        r->files = realloc(r->files, sizeof(file_t) * (r->files_n + 1));
        r->files[r->files_n++] = f;
        ws(c);
        if (c->p < c->end && *c->p == ',') { c->p++; ws(c); }
    }
    if (c->p >= c->end) { c->bad = 1; return; }
    c->p++;
}

static int parse_request(const char *line, size_t n, request_t *r) {
    cur_t c = {line, line + n, 0};
    memset(r, 0, sizeof *r);
    r->timeout_s = 30.0;
    r->cap = 1024 * 1024;
    ws(&c);
    if (c.p >= c.end || *c.p != '{') return 0;
    c.p++;
    ws(&c);
    while (c.p < c.end && *c.p != '}' && !c.bad) {
        buf_t key = {0};
        parse_string(&c, &key);
        ws(&c);
        if (c.p >= c.end || *c.p != ':') { free(key.data); return 0; }
        c.p++;
        ws(&c);
        const char *k = key.data ? key.data : "";
        if (!strcmp(k, "id") && c.p < c.end && *c.p != 'n') { r->id = (long)parse_number(&c); r->has_id = 1; }
        else if (!strcmp(k, "cancel")) { r->cancel = (long)parse_number(&c); r->has_cancel = 1; }
        else if (!strcmp(k, "hello")) { r->hello = is_literal(&c, "true"); if (!r->hello) skip_value(&c); }
        else if (!strcmp(k, "timeout_s")) r->timeout_s = parse_number(&c);
        else if (!strcmp(k, "cap")) r->cap = (long)parse_number(&c);
        else if (!strcmp(k, "stdin") && *c.p == '"') parse_string(&c, &r->stdin_data);
        else if (!strcmp(k, "cwd") && *c.p == '"') { parse_string(&c, &r->cwd); r->has_cwd = r->cwd.len > 0; }
        else if (!strcmp(k, "env")) parse_env(&c, r);
        else if (!strcmp(k, "nonce") && *c.p == '"') parse_string(&c, &r->nonce);
        else if (!strcmp(k, "auth") && *c.p == '"') parse_string(&c, &r->auth);
        else if (!strcmp(k, "write_only")) { r->write_only = is_literal(&c, "true"); if (!r->write_only) skip_value(&c); }
        else if (!strcmp(k, "dirs")) (void)parse_strings(&c, &r->dirs, &r->dirs_n);
        else if (!strcmp(k, "argv")) { r->has_argv = 1; r->argv_ok = parse_strings(&c, &r->argv, &r->argv_n); }
        else if (!strcmp(k, "files")) parse_files(&c, r);
        else skip_value(&c);
        free(key.data);
        ws(&c);
        if (c.p < c.end && *c.p == ',') { c.p++; ws(&c); }
    }
    return !c.bad && c.p < c.end;
}

static void free_request(request_t *r) {
    free(r->stdin_data.data);
    free(r->cwd.data);
    free(r->nonce.data);
    free(r->auth.data);
    for (size_t i = 0; i < r->env_n; i++) free(r->env[i]);
    free(r->env);
    for (size_t i = 0; i < r->dirs_n; i++) free(r->dirs[i].data);
    free(r->dirs);
    for (size_t i = 0; i < r->argv_n; i++) free(r->argv[i].data);
    free(r->argv);
    for (size_t i = 0; i < r->files_n; i++) { free(r->files[i].path.data); free(r->files[i].data.data); }
    free(r->files);
}

/* ---- JSON out ------------------------------------------------------------------------- */
static void put_escaped(buf_t *out, const unsigned char *s, size_t n) {
    buf_add(out, "\"", 1);
    size_t i = 0;
    while (i < n) {
        unsigned char ch = s[i];
        if (ch < 0x80) {
            if (ch == '"') buf_str(out, "\\\"");
            else if (ch == '\\') buf_str(out, "\\\\");
            else if (ch == '\n') buf_str(out, "\\n");
            else if (ch == '\r') buf_str(out, "\\r");
            else if (ch == '\t') buf_str(out, "\\t");
            else if (ch < 0x20 || ch == 0x7f) buf_fmt(out, "\\u%04x", ch);
            else buf_add(out, &ch, 1);
            i++;
            continue;
        }
        /* Strict UTF-8 (no overlongs, no encoded surrogates, <= U+10FFFF), as Python decodes. */
        uint32_t cp = 0;
        size_t len = 0;
        if (ch >= 0xC2 && ch <= 0xDF) { len = 2; cp = ch & 0x1F; }
        else if (ch >= 0xE0 && ch <= 0xEF) { len = 3; cp = ch & 0x0F; }
        else if (ch >= 0xF0 && ch <= 0xF4) { len = 4; cp = ch & 0x07; }
        int ok = len > 0 && i + len <= n;
        for (size_t j = 1; ok && j < len; j++) {
            if ((s[i + j] & 0xC0) != 0x80) ok = 0;
            else cp = (cp << 6) | (s[i + j] & 0x3F);
        }
        if (ok && len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ok = 0;
        if (ok && len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ok = 0;
        if (!ok) { buf_fmt(out, "\\udc%02x", ch); i++; continue; }
        if (cp >= 0x10000) {
            uint32_t v = cp - 0x10000;
            buf_fmt(out, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
        } else {
            buf_fmt(out, "\\u%04x", cp);
        }
        i += len;
    }
    buf_add(out, "\"", 1);
}

static void send_line(buf_t *line, unsigned long gen) {
    buf_add(line, "\n", 1);
    pthread_mutex_lock(&out_lock);
    size_t off = 0;
    while (gen == out_gen && out_fd >= 0 && off < line->len) {
        ssize_t w = out_fd == 1 ? write(1, line->data + off, line->len - off)
                                : send(out_fd, line->data + off, line->len - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        off += (size_t)w;
    }
    pthread_mutex_unlock(&out_lock);
}

/* ---- calls ---------------------------------------------------------------------------- */
static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

static char **make_env(request_t *r) {
    size_t base = 0;
    while (environ[base]) base++;
    char **env = calloc(base + r->env_n + 1, sizeof(char *));
    size_t n = 0;
    for (size_t i = 0; i < base; i++) {
        size_t klen = strcspn(environ[i], "=");
        int overridden = 0;
        for (size_t j = 0; j < r->env_n; j++)
            if (strncmp(r->env[j], environ[i], klen + 1) == 0) overridden = 1;
        if (!overridden) env[n++] = environ[i];
    }
    for (size_t j = 0; j < r->env_n; j++) env[n++] = r->env[j];
    env[n] = NULL;
    return env;
}

/* The hook and its group.  The pid too: a hook forked a moment ago may not have called setsid()
 * yet, and then its group does not exist and kill(-pid) misses it (it has no children then). */
static void kill_call(pid_t pid) {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
}

/* Returns the slot, -1 when none is free, or SLOT_GONE when the call's client has already hung
 * up: its hook started after the hang-up's sweep, so it is killed here (under the same lock). */
static int slot_add(long id, pid_t pid, unsigned long gen) {
    pthread_mutex_lock(&calls_lock);
    if (gen != live_gen) {
        kill_call(pid);
        pthread_mutex_unlock(&calls_lock);
        return SLOT_GONE;
    }
    int found = -1;
    for (int i = 0; i < MAX_CALLS; i++)
        if (calls[i].pid == 0) {
            calls[i].id = id; calls[i].pid = pid; calls[i].cancelled = 0; calls[i].gen = gen; found = i; break;
        }
    pthread_mutex_unlock(&calls_lock);
    return found;
}

static int slot_release(int slot) {
    if (slot == SLOT_GONE) return 1;  /* cancelled by the hang-up */
    if (slot < 0) return 0;
    pthread_mutex_lock(&calls_lock);
    int cancelled = calls[slot].cancelled;
    calls[slot].pid = 0;
    pthread_mutex_unlock(&calls_lock);
    return cancelled;
}

static void answer_error(long id, const char *field, const char *text, unsigned long gen) {
    buf_t line = {0};
    buf_fmt(&line, "{\"id\": %ld, \"exit_code\": null, \"stdout\": \"\", \"stderr\": \"\", \"timed_out\": false, "
                   "\"oversize\": null, \"run_ms\": 0.0, \"%s\": ", id, field);
    put_escaped(&line, (const unsigned char *)text, strlen(text));
    buf_add(&line, "}", 1);
    send_line(&line, gen);
    free(line.data);
}

/* A call that got no thread or no process: the container is at its pids limit, which only its own
 * hooks fill.  Answered as a hook that could not start (exit 127), as call_server.py answers a
 * failed Popen: the seam's own failure, graded once, and the server lives on. */
static void answer_not_started(long id, const char *why, unsigned long gen) {
    buf_t line = {0}, text = {0};
    buf_fmt(&line, "{\"id\": %ld, \"exit_code\": 127, \"stdout\": \"\", \"stderr\": ", id);
    buf_str(&text, "cannot start hook: ");
    buf_str(&text, why);
    buf_str(&text, "\n");
    put_escaped(&line, (const unsigned char *)text.data, text.len);
    buf_str(&line, ", \"timed_out\": false, \"oversize\": null, \"run_ms\": 0.0}");
    send_line(&line, gen);
    free(line.data);
    free(text.data);
}

/* mkdir -p, each new directory 0700 (the hook's alone). */
static int make_dirs(const char *path) {
    char *copy = strdup(path);
    int rc = 0;
    for (char *p = copy + 1; ; p++) {
        if (*p == '/' || *p == 0) {
            char was = *p;
            *p = 0;
            if (*copy && mkdir(copy, 0700) != 0 && errno != EEXIST) { rc = -1; *p = was; break; }
            *p = was;
            if (!was) break;
        }
    }
    free(copy);
    return rc;
}

/* A remote seam cannot see the runner's files: the call carries the transcript its hook reads,
 * written at the same absolute path (atomically, replacing the last turn's copy).  Returns 0, or
 * -1 with ``why`` set. */
static int write_files(request_t *r, char *why, size_t why_n) {
    for (size_t i = 0; i < r->dirs_n; i++)
        if (make_dirs(r->dirs[i].data) != 0) {
            snprintf(why, why_n, "call server: cannot make %s: %s", r->dirs[i].data, strerror(errno));
            return -1;
        }
    for (size_t i = 0; i < r->files_n; i++) {
        const char *path = r->files[i].path.data;
        char *dir = strdup(path), *slash = strrchr(dir, '/');
        if (slash && slash != dir) { *slash = 0; make_dirs(dir); }
        free(dir);
        buf_t temp = {0};
        buf_str(&temp, path);
        buf_str(&temp, ".bb-tmp");
        int fd = open(temp.data, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        size_t off = 0, len = r->files[i].data.len;
        while (fd >= 0 && off < len) {
            ssize_t w = write(fd, r->files[i].data.data + off, len - off);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) break;
            off += (size_t)w;
        }
        int ok = fd >= 0 && off == len && close(fd) == 0 && rename(temp.data, path) == 0;
        if (!ok) snprintf(why, why_n, "call server: cannot write %s: %s", path, strerror(errno));
        free(temp.data);
        if (!ok) return -1;
    }
    return 0;
}

static void *run_call(void *arg) {
    request_t *r = arg;
    double started = now_ms();
    char why[4200] = "";
    if (r->has_argv && (!r->argv_ok || !r->argv_n)) {
        answer_error(r->id, "error", ARGV_REFUSED, r->gen);
        free_request(r);
        free(r);
        return NULL;
    }
    if (write_files(r, why, sizeof why) != 0 || r->write_only) {
        if (r->write_only && !why[0]) {
            buf_t line = {0};
            buf_fmt(&line, "{\"id\": %ld, \"written\": true}", r->id);
            send_line(&line, r->gen);
            free(line.data);
        } else {
            answer_error(r->id, "error", why, r->gen);
        }
        free_request(r);
        free(r);
        return NULL;
    }
    if (r->has_cwd) {
        struct stat st;
        if (stat(r->cwd.data, &st) != 0 || !S_ISDIR(st.st_mode) || access(r->cwd.data, X_OK) != 0) {
            snprintf(why, sizeof why, "cannot enter cwd %s", r->cwd.data);
            answer_error(r->id, "infra_error", why, r->gen);
            free_request(r);
            free(r);
            return NULL;
        }
    }
    int in[2], out[2], err[2];
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
        answer_error(r->id, "error", "call server: no pipes", r->gen);
        free_request(r);
        free(r);
        return NULL;
    }
    char **env = make_env(r);
    /* Built before the fork: the child of a threaded process may not allocate. */
    char **argv = hook_argv;
    char **own_argv = NULL;
    if (r->argv_n) {
        own_argv = calloc(r->argv_n + 1, sizeof(char *));
        if (own_argv) {
            for (size_t i = 0; i < r->argv_n; i++) own_argv[i] = r->argv[i].data;
            argv = own_argv;
        }
    }
    pid_t pid = fork();
    int fork_error = errno;
    if (pid == 0) {
        /* As Python's subprocess does (restore_signals): the hook gets default dispositions. */
        signal(SIGPIPE, SIG_DFL);
        signal(SIGXFSZ, SIG_DFL);
        setsid();
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        if (r->has_cwd && chdir(r->cwd.data) != 0) _exit(75);
        if (r->argv_n && !own_argv) _exit(127);
        execvpe(argv[0], argv, env);
        const char *msg = "cannot start hook: ";
        (void)!write(2, msg, strlen(msg));
        (void)!write(2, strerror(errno), strlen(strerror(errno)));
        (void)!write(2, "\n", 1);
        _exit(127);
    }
    free(env);
    free(own_argv);
    close(in[0]);
    close(out[1]);
    close(err[1]);
    if (pid < 0) {
        close(in[1]); close(out[0]); close(err[0]);
        answer_not_started(r->id, strerror(fork_error), r->gen);
        free_request(r);
        free(r);
        return NULL;
    }
    int slot = slot_add(r->id, pid, r->gen);
    fcntl(in[1], F_SETFL, O_NONBLOCK);
    buf_t bufs[2] = {{0}, {0}};
    const char *names[2] = {"stdout", "stderr"};
    int fds[2] = {out[0], err[0]};
    size_t fed = 0;
    int in_fd = in[1];
    if (r->stdin_data.len == 0) { close(in_fd); in_fd = -1; }
    int timed_out = 0, exited = 0;
    char oversize[64] = "";
    double deadline = started + r->timeout_s * 1000.0;
    while ((fds[0] >= 0 || fds[1] >= 0) && !oversize[0]) {
        double remaining = deadline - now_ms();
        if (remaining <= 0) { timed_out = 1; break; }
        struct pollfd pf[3];
        int map[3], n = 0;
        for (int k = 0; k < 2; k++) if (fds[k] >= 0) { pf[n].fd = fds[k]; pf[n].events = POLLIN; map[n++] = k; }
        if (in_fd >= 0) { pf[n].fd = in_fd; pf[n].events = POLLOUT; map[n++] = 2; }
        /* A hook that exited while a leaked child holds its pipes is noticed within 50 ms. */
        int wait_ms = remaining < 50 ? (int)remaining + 1 : 50;
        int got = poll(pf, (nfds_t)n, wait_ms);
        if (got < 0 && errno != EINTR) break;
        for (int i = 0; i < n && got > 0; i++) {
            if (!pf[i].revents) continue;
            if (map[i] == 2) {
                ssize_t w = write(in_fd, r->stdin_data.data + fed, r->stdin_data.len - fed);
                if (w > 0) fed += (size_t)w;
                if ((w < 0 && errno != EAGAIN) || fed >= r->stdin_data.len || (pf[i].revents & (POLLERR | POLLHUP))) {
                    close(in_fd);  /* done, or the hook stopped reading: its output still counts */
                    in_fd = -1;
                }
                continue;
            }
            int k = map[i];
            char chunk[65536];
            ssize_t got_n = read(fds[k], chunk, sizeof chunk);
            if (got_n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (got_n <= 0) { close(fds[k]); fds[k] = -1; continue; }
            if ((long)(bufs[k].len + (size_t)got_n) > r->cap) {
                snprintf(oversize, sizeof oversize, "%s over %ld bytes", names[k], r->cap);
                break;
            }
            buf_add(&bufs[k], chunk, (size_t)got_n);
        }
        if (!exited) {
            siginfo_t info;
            info.si_pid = 0;
            if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) {
                exited = 1;
                kill(-pid, SIGKILL);  /* the hook is done: what is left of its group is a leak */
            }
        }
    }
    kill_call(pid);
    /* Out of the table before the reap: a cancel must never signal a pid the kernel has reused. */
    if (slot_release(slot)) timed_out = 1;  /* the host gave up on it: a timeout */
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (in_fd >= 0) close(in_fd);
    for (int k = 0; k < 2; k++) if (fds[k] >= 0) close(fds[k]);
    double run_ms = now_ms() - started;
    buf_t line = {0};
    buf_fmt(&line, "{\"id\": %ld, ", r->id);
    if (timed_out || oversize[0]) {
        buf_fmt(&line, "\"exit_code\": null, \"stdout\": \"\", \"stderr\": \"\", \"timed_out\": %s, \"oversize\": ",
                timed_out ? "true" : "false");
        if (oversize[0]) put_escaped(&line, (const unsigned char *)oversize, strlen(oversize));
        else buf_str(&line, "null");
    } else {
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
        buf_fmt(&line, "\"exit_code\": %d, \"stdout\": ", code);
        put_escaped(&line, (const unsigned char *)(bufs[0].data ? bufs[0].data : ""), bufs[0].len);
        buf_str(&line, ", \"stderr\": ");
        put_escaped(&line, (const unsigned char *)(bufs[1].data ? bufs[1].data : ""), bufs[1].len);
        buf_str(&line, ", \"timed_out\": false, \"oversize\": null");
    }
    buf_fmt(&line, ", \"run_ms\": %.3f}", run_ms);
    send_line(&line, r->gen);
    free(line.data);
    free(bufs[0].data);
    free(bufs[1].data);
    free_request(r);
    free(r);
    return NULL;
}

static void handle(const char *text, size_t n, unsigned long gen) {
    request_t *r = malloc(sizeof *r);
    if (!parse_request(text, n, r)) {
        free_request(r);
        free(r);
        buf_t line = {0};
        buf_str(&line, "{\"id\": -1, \"error\": \"bad request\"}");
        send_line(&line, gen);
        free(line.data);
        return;
    }
    r->gen = gen;
    if (r->has_cancel) {
        pthread_mutex_lock(&calls_lock);
        for (int i = 0; i < MAX_CALLS; i++)
            if (calls[i].pid && calls[i].id == r->cancel && calls[i].gen == gen) {
                calls[i].cancelled = 1;
                kill_call(calls[i].pid);
            }
        pthread_mutex_unlock(&calls_lock);
    } else if (r->hello) {
        buf_t line = {0};
        buf_fmt(&line, "{\"id\": %ld, \"ready\": true, \"argv\": true, \"pid\": %d}", r->id, (int)getpid());
        send_line(&line, gen);
        free(line.data);
    } else {
        pthread_t thread;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&thread, &attr, run_call, r) == 0) { pthread_attr_destroy(&attr); return; }
        pthread_attr_destroy(&attr);
        answer_not_started(r->id, "the call server got no thread for it (the container is at its process limit)", gen);
    }
    free_request(r);
    free(r);
}

/* Frame ``fd`` into request lines (``pending`` holds bytes already read) until EOF. */
static void serve_lines(int fd, buf_t *pending, unsigned long gen) {
    size_t scanned = 0;  /* bytes of ``pending`` known to hold no newline: framing stays linear */
    char chunk[65536];
    for (;;) {
        size_t start = 0;
        char *nl;
        while (pending->len > scanned &&
               (nl = memchr(pending->data + scanned, '\n', pending->len - scanned)) != NULL) {
            size_t len = (size_t)(nl - (pending->data + start));
            if (len) handle(pending->data + start, len, gen);
            start += len + 1;
            scanned = start;
        }
        if (start) {
            memmove(pending->data, pending->data + start, pending->len - start);
            pending->len -= start;
        }
        scanned = pending->len;
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        buf_add(pending, chunk, (size_t)n);
    }
}

/* ---- SHA-256 and HMAC (FIPS 180-4, RFC 2104): the listen-mode handshake's proofs -------- */
typedef struct { uint32_t h[8]; uint64_t bytes; unsigned char block[64]; size_t used; } sha256_t;

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha256_block(sha256_t *s, const unsigned char *p) {
    uint32_t w[64], v[8];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++)
        w[i] = w[i - 16] + (rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)) + w[i - 7]
             + (rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10));
    memcpy(v, s->h, sizeof v);
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = v[7] + (rotr(v[4], 6) ^ rotr(v[4], 11) ^ rotr(v[4], 25)) + ((v[4] & v[5]) ^ (~v[4] & v[6]))
                    + K256[i] + w[i];
        uint32_t t2 = (rotr(v[0], 2) ^ rotr(v[0], 13) ^ rotr(v[0], 22)) + ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
        memmove(v + 1, v, 7 * sizeof *v);
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++) s->h[i] += v[i];
}

static void sha256_init(sha256_t *s) {
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, iv, sizeof iv);
    s->bytes = 0;
    s->used = 0;
}

static void sha256_add(sha256_t *s, const void *data, size_t n) {
    const unsigned char *p = data;
    s->bytes += n;
    while (n) {
        size_t take = 64 - s->used < n ? 64 - s->used : n;
        memcpy(s->block + s->used, p, take);
        s->used += take;
        p += take;
        n -= take;
        if (s->used == 64) { sha256_block(s, s->block); s->used = 0; }
    }
}

static void sha256_end(sha256_t *s, unsigned char out[32]) {
    uint64_t bits = s->bytes * 8;
    unsigned char tail[72] = {0x80};
    size_t pad = (s->used < 56 ? 56 : 120) - s->used;
    for (int i = 0; i < 8; i++) tail[pad + i] = (unsigned char)(bits >> (56 - 8 * i));
    sha256_add(s, tail, pad + 8);
    for (int i = 0; i < 32; i++) out[i] = (unsigned char)(s->h[i / 4] >> (24 - 8 * (i % 4)));
}

static void hmac_sha256(const unsigned char *key, size_t key_n, const void *msg, size_t msg_n, unsigned char out[32]) {
    unsigned char k[64] = {0}, pad[64], inner[32];
    sha256_t s;
    if (key_n > 64) { sha256_init(&s); sha256_add(&s, key, key_n); sha256_end(&s, k); }
    else memcpy(k, key, key_n);
    for (int i = 0; i < 64; i++) pad[i] = k[i] ^ 0x36;
    sha256_init(&s); sha256_add(&s, pad, 64); sha256_add(&s, msg, msg_n); sha256_end(&s, inner);
    for (int i = 0; i < 64; i++) pad[i] = k[i] ^ 0x5c;
    sha256_init(&s); sha256_add(&s, pad, 64); sha256_add(&s, inner, 32); sha256_end(&s, out);
}

/* ---- listen mode ---------------------------------------------------------------------- */
#define HELLO_TIMEOUT_S 5
#define HELLO_MAX_BYTES 4096
/* Connections that have not authenticated yet: a flood of them cannot starve the server. */
#define MAX_PENDING 8
#define NONCE_MIN 16
#define NONCE_MAX 128
static char *token;
static char chunk_for_token[4096];
static size_t token_len;
static pthread_mutex_t session_lock = PTHREAD_MUTEX_INITIALIZER;
static int session_busy;
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static int pending_fds[MAX_PENDING];
static int pending_n;

/* A new connection waits to authenticate; at the cap the oldest waiting one is cut off (shut down
 * here, closed by its own thread, which leaves the list before it closes: no fd is reused under us). */
static void pending_add(int fd) {
    pthread_mutex_lock(&pending_lock);
    if (pending_n == MAX_PENDING) {
        shutdown(pending_fds[0], SHUT_RDWR);
        memmove(pending_fds, pending_fds + 1, (MAX_PENDING - 1) * sizeof *pending_fds);
        pending_n--;
    }
    pending_fds[pending_n++] = fd;
    pthread_mutex_unlock(&pending_lock);
}

static void pending_remove(int fd) {
    pthread_mutex_lock(&pending_lock);
    for (int i = 0; i < pending_n; i++)
        if (pending_fds[i] == fd) {
            memmove(pending_fds + i, pending_fds + i + 1, (size_t)(pending_n - i - 1) * sizeof *pending_fds);
            pending_n--;
            break;
        }
    pthread_mutex_unlock(&pending_lock);
}

static void reply(int fd, long id, const char *error) {
    buf_t line = {0};
    buf_fmt(&line, "{\"id\": %ld, \"error\": ", id);
    put_escaped(&line, (const unsigned char *)error, strlen(error));
    buf_str(&line, "}\n");
    (void)!send(fd, line.data, line.len, MSG_NOSIGNAL);
    free(line.data);
}

/* HMAC-SHA256(token, ROLE|client nonce|server nonce) in hex: call_server.py's proof(). */
static void proof(const char *role, const buf_t *client_nonce, const char *server_nonce, char hex[65]) {
    buf_t msg = {0};
    unsigned char mac[32];
    buf_str(&msg, role);
    buf_add(&msg, "|", 1);
    buf_add(&msg, client_nonce->data, client_nonce->len);
    buf_add(&msg, "|", 1);
    buf_str(&msg, server_nonce);
    hmac_sha256((const unsigned char *)token, token_len, msg.data, msg.len, mac);
    free(msg.data);
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", mac[i]);
}

static int nonce_ok(const buf_t *nonce) {
    if (nonce->len < NONCE_MIN || nonce->len > NONCE_MAX) return 0;
    for (size_t i = 0; i < nonce->len; i++)
        if (!strchr("0123456789abcdef", nonce->data[i]) || !nonce->data[i]) return 0;
    return 1;
}

static int same(const char *a, size_t a_n, const char *b, size_t b_n) {
    if (a_n != b_n) return 0;
    unsigned char diff = 0;
    for (size_t i = 0; i < a_n; i++) diff |= (unsigned char)(a[i] ^ b[i]);
    return diff == 0;
}

/* The next request line of a connection that is still authenticating, within its deadline and
 * size; it is removed from ``pending`` into ``r``.  0 if none came or it does not parse. */
static int next_hello_line(int fd, buf_t *pending, double deadline, request_t *r) {
    char chunk[HELLO_MAX_BYTES];
    char *nl;
    memset(r, 0, sizeof *r);
    while (!(nl = pending->len ? memchr(pending->data, '\n', pending->len) : NULL) && pending->len <= HELLO_MAX_BYTES
           && now_ms() < deadline) {
        ssize_t n = recv(fd, chunk, sizeof chunk, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        buf_add(pending, chunk, (size_t)n);
    }
    if (!nl || (size_t)(nl - pending->data) > HELLO_MAX_BYTES) return 0;
    size_t first = (size_t)(nl - pending->data);
    int parsed = parse_request(pending->data, first, r);
    memmove(pending->data, pending->data + first + 1, pending->len - first - 1);
    pending->len -= first + 1;
    return parsed;
}

static void *serve_client(void *arg) {
    int fd = (int)(intptr_t)arg;
    struct timeval tv = {HELLO_TIMEOUT_S, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    buf_t pending = {0};
    double deadline = now_ms() + HELLO_TIMEOUT_S * 1000.0;
    request_t hello, auth;
    memset(&auth, 0, sizeof auth);
    /* Whatever a refused line allocated is freed below: refusals must not cost memory. */
    if (!next_hello_line(fd, &pending, deadline, &hello) || !hello.hello || !nonce_ok(&hello.nonce)) {
        reply(fd, hello.id, "unauthorized");
        goto done;
    }
    unsigned char raw[16];
    char server_nonce[33], mine[65], theirs[65];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) { reply(fd, hello.id, "no randomness"); goto done; }
    for (int i = 0; i < 16; i++) snprintf(server_nonce + 2 * i, 3, "%02x", raw[i]);
    proof("brainbench-call-server", &hello.nonce, server_nonce, mine);
    buf_t line = {0};
    buf_fmt(&line, "{\"id\": %ld, \"challenge\": \"%s\", \"proof\": \"", hello.id, server_nonce);
    buf_str(&line, mine);
    buf_str(&line, "\"}\n");
    (void)!send(fd, line.data, line.len, MSG_NOSIGNAL);
    free(line.data);
    proof("brainbench-call-client", &hello.nonce, server_nonce, theirs);
    if (!next_hello_line(fd, &pending, deadline, &auth) || !auth.auth.data
        || !same(auth.auth.data, auth.auth.len, theirs, 64)) {
        reply(fd, auth.id, "unauthorized");
        goto done;
    }
    pending_remove(fd);
    pthread_mutex_lock(&session_lock);
    int busy = session_busy;
    session_busy = 1;
    pthread_mutex_unlock(&session_lock);
    if (busy) {
        reply(fd, auth.id, "busy: another client is connected");
        goto done;
    }
    struct timeval none = {0, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
    pthread_mutex_lock(&out_lock);
    unsigned long gen = ++out_gen;
    out_fd = fd;
    pthread_mutex_unlock(&out_lock);
    pthread_mutex_lock(&calls_lock);
    live_gen = gen;
    pthread_mutex_unlock(&calls_lock);
    line = (buf_t){0};
    buf_fmt(&line, "{\"id\": %ld, \"ready\": true, \"argv\": true, \"pid\": %d}", auth.id, (int)getpid());
    send_line(&line, gen);
    free(line.data);
    serve_lines(fd, &pending, gen);
    /* Hung up: nothing more goes to this socket, and its calls are killed. */
    pthread_mutex_lock(&out_lock);
    out_fd = -1;
    out_gen++;
    pthread_mutex_unlock(&out_lock);
    pthread_mutex_lock(&calls_lock);
    live_gen = 0;  /* no session: a call of this one starting from now is killed in slot_add */
    for (int i = 0; i < MAX_CALLS; i++)
        if (calls[i].pid && calls[i].gen == gen) { calls[i].cancelled = 1; kill_call(calls[i].pid); }
    pthread_mutex_unlock(&calls_lock);
    pthread_mutex_lock(&session_lock);
    session_busy = 0;
    pthread_mutex_unlock(&session_lock);
done:
    pending_remove(fd);
    free_request(&hello);
    free_request(&auth);
    free(pending.data);
    close(fd);
    return NULL;
}

static int usage(const char *why) {
    fprintf(stderr, "call server: %s\nusage: call-server HOOK [ARG...]\n"
                    "       call-server --listen HOST:PORT [--token-file FILE] -- HOOK [ARG...]\n", why);
    return 64;
}

static int listen_main(int argc, char **argv) {
    const char *address = NULL, *token_file = NULL;
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i += 2) {
        if (i + 1 >= argc) return usage("an option without a value");
        if (!strcmp(argv[i], "--listen")) address = argv[i + 1];
        else if (!strcmp(argv[i], "--token-file")) token_file = argv[i + 1];
        else return usage("unknown option");
    }
    if (i >= argc - 1) return usage("no hook command after --");
    hook_argv = argv + i + 1;
    const char *env_token = getenv("BRAINBENCH_CALL_TOKEN");
    buf_t tok = {0};
    if (env_token) buf_str(&tok, env_token);
    unsetenv("BRAINBENCH_CALL_TOKEN");  /* never handed on to a hook */
    if (token_file) {
        tok.len = 0;
        int fd = open(token_file, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return usage("cannot read the token file");
        ssize_t n;
        while ((n = read(fd, chunk_for_token, sizeof chunk_for_token)) > 0) buf_add(&tok, chunk_for_token, (size_t)n);
        close(fd);
    }
    while (tok.len && strchr(" \t\r\n", tok.data[tok.len - 1])) tok.data[--tok.len] = 0;
    if (!tok.len) return usage("no token: give --token-file FILE or BRAINBENCH_CALL_TOKEN");
    token = tok.data;
    token_len = tok.len;
    const char *colon = strrchr(address ? address : "", ':');
    if (!address || !colon) return usage("--listen wants HOST:PORT");
    char host[256];
    size_t hlen = (size_t)(colon - address);
    if (hlen >= sizeof host) return usage("host too long");
    memcpy(host, address, hlen);
    host[hlen] = 0;
    char *h = host;
    if (h[0] == '[') { h++; if (hlen && host[hlen - 1] == ']') host[hlen - 1] = 0; }
    /* Numeric addresses only (inet_pton): no resolver, which a static binary cannot load. */
    struct sockaddr_storage where;
    socklen_t where_len;
    memset(&where, 0, sizeof where);
    char *end = NULL;
    long port = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || port < 0 || port > 65535) return usage("--listen wants HOST:PORT");
    struct sockaddr_in *v4 = (struct sockaddr_in *)&where;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&where;
    if (inet_pton(AF_INET, *h ? h : "127.0.0.1", &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        where_len = sizeof *v4;
    } else if (inet_pton(AF_INET6, h, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        where_len = sizeof *v6;
    } else {
        return usage("--listen wants a numeric HOST:PORT (127.0.0.1:7701)");
    }
    int server = socket(where.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (server >= 0) setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (server < 0 || bind(server, (struct sockaddr *)&where, where_len) != 0 || listen(server, 16) != 0) {
        perror("call server: listen");
        return 71;
    }
    fprintf(stderr, "call server: listening on %s\n", address);
    for (;;) {
        int fd = accept4(server, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE) { usleep(10000); continue; }
            perror("call server: accept");
            return 71;
        }
        pthread_t thread;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pending_add(fd);
        if (pthread_create(&thread, &attr, serve_client, (void *)(intptr_t)fd) != 0) {
            /* No thread (the container at its pids limit): this connection is dropped, the server goes on. */
            pending_remove(fd);
            close(fd);
            usleep(10000);
        }
        pthread_attr_destroy(&attr);
    }
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    if (argc >= 2 && !strcmp(argv[1], "--listen")) return listen_main(argc, argv);
    if (argc < 2) return usage("no hook command");
    hook_argv = argv + 1;
    buf_t pending = {0};
    serve_lines(0, &pending, out_gen);
    return 0;
}
