/*
 * A causal broadcast node (vector clocks) in C, speaking Maelstrom's broadcast workload:
 * the same protocol as causal_broadcast.py, to show that `ordercheck run` checks any
 * program that reads and writes JSON lines.
 *
 * Built by `make setup` (or `make nodes`) with the system C compiler into
 * build/nodes/causal_broadcast; run by
 *   ordercheck run --node-cmd build/nodes/causal_broadcast
 *
 * One JSON message per line on stdin, one per line on stdout. A small hand-written JSON
 * parser (objects, arrays, strings, integers, true/false/null) reads each line into a
 * tree; only the fields of the envelope and of the workload's bodies are looked at.
 * Values broadcast must be integers. A client's `broadcast` is stamped with the node's
 * vector clock and sent to every other node as a `cb` message
 * ({"type": "cb", "message": V, "sender": INDEX, "vc": [..]}); a received `cb` is held
 * back until every message that causally precedes it has been delivered here. `read`
 * lists the values delivered, in delivery order.
 */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NODES 64

/* ---- a tiny JSON tree ---- */

enum kind { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct json {
    enum kind kind;
    long long num;       /* J_NUM, J_BOOL */
    char *str;           /* J_STR */
    int len;             /* J_ARR, J_OBJ: number of items */
    char **keys;         /* J_OBJ */
    struct json **items; /* J_ARR, J_OBJ */
} json;

typedef struct {
    const char *p;
    int depth;
} parser;

static void json_free(json *j) {
    if (!j) return;
    for (int i = 0; i < j->len; i++) {
        json_free(j->items[i]);
        if (j->keys) free(j->keys[i]);
    }
    free(j->items);
    free(j->keys);
    free(j->str);
    free(j);
}

static void skip_ws(parser *ps) {
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r' || *ps->p == '\n') ps->p++;
}

static json *parse_value(parser *ps);

static char *parse_string(parser *ps) {
    if (*ps->p != '"') return NULL;
    ps->p++;
    size_t cap = 16, n = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    for (;;) {
        char c = *ps->p++;
        if (c == '\0') { free(out); return NULL; }
        if (c == '"') break;
        if (c == '\\') {
            char e = *ps->p++;
            switch (e) {
            case '"': c = '"'; break;
            case '\\': c = '\\'; break;
            case '/': c = '/'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'u':
                for (int k = 0; k < 4; k++)
                    if (!isxdigit((unsigned char)ps->p[k])) { free(out); return NULL; }
                ps->p += 4;
                c = '?'; /* names in this workload are ASCII; other characters are not needed */
                break;
            default: free(out); return NULL;
            }
        }
        if (n + 2 > cap) {
            char *bigger = realloc(out, cap *= 2);
            if (!bigger) { free(out); return NULL; }
            out = bigger;
        }
        out[n++] = c;
    }
    out[n] = '\0';
    return out;
}

static int push(json *j, char *key, json *item) {
    char **keys = j->kind == J_OBJ ? realloc(j->keys, (j->len + 1) * sizeof *keys) : NULL;
    json **items = realloc(j->items, (j->len + 1) * sizeof *items);
    if (items) j->items = items;
    if (keys) j->keys = keys;
    if (!items || (j->kind == J_OBJ && !keys)) return 0;
    if (j->kind == J_OBJ) j->keys[j->len] = key;
    j->items[j->len++] = item;
    return 1;
}

static json *parse_container(parser *ps, enum kind kind) {
    char close = kind == J_OBJ ? '}' : ']';
    json *j = calloc(1, sizeof *j);
    if (!j) return NULL;
    j->kind = kind;
    ps->p++;
    skip_ws(ps);
    if (*ps->p == close) { ps->p++; return j; }
    for (;;) {
        char *key = NULL;
        skip_ws(ps);
        if (kind == J_OBJ) {
            key = parse_string(ps);
            skip_ws(ps);
            if (!key || *ps->p != ':') { free(key); json_free(j); return NULL; }
            ps->p++;
        }
        json *item = parse_value(ps);
        if (!item || !push(j, key, item)) { free(key); json_free(item); json_free(j); return NULL; }
        skip_ws(ps);
        if (*ps->p == ',') { ps->p++; continue; }
        if (*ps->p == close) { ps->p++; return j; }
        json_free(j);
        return NULL;
    }
}

static json *parse_value(parser *ps) {
    if (++ps->depth > 64) return NULL;
    skip_ws(ps);
    json *j = NULL;
    char c = *ps->p;
    if (c == '{') j = parse_container(ps, J_OBJ);
    else if (c == '[') j = parse_container(ps, J_ARR);
    else if (c == '"') {
        char *s = parse_string(ps);
        if (s && (j = calloc(1, sizeof *j))) { j->kind = J_STR; j->str = s; } else free(s);
    } else if (c == '-' || isdigit((unsigned char)c)) {
        char *end;
        long long v = strtoll(ps->p, &end, 10);
        if (*end == '.' || *end == 'e' || *end == 'E') return NULL; /* integers only */
        ps->p = end;
        if ((j = calloc(1, sizeof *j))) { j->kind = J_NUM; j->num = v; }
    } else {
        static const char *words[] = {"true", "false", "null"};
        for (int k = 0; k < 3; k++)
            if (strncmp(ps->p, words[k], strlen(words[k])) == 0 && (j = calloc(1, sizeof *j))) {
                ps->p += strlen(words[k]);
                j->kind = k == 2 ? J_NULL : J_BOOL;
                j->num = k == 0;
                break;
            }
    }
    ps->depth--;
    return j;
}

static json *get(const json *j, const char *key) {
    if (!j || j->kind != J_OBJ) return NULL;
    for (int i = 0; i < j->len; i++)
        if (strcmp(j->keys[i], key) == 0) return j->items[i];
    return NULL;
}

static const char *get_str(const json *j, const char *key) {
    json *v = get(j, key);
    return v && v->kind == J_STR ? v->str : NULL;
}

/* ---- the node ---- */

static char me[64];
static char ids[MAX_NODES][64];
static int nodes, self;
static long long clock_[MAX_NODES];
static long long *delivered;
static int n_delivered, cap_delivered;

typedef struct {
    long long value;
    int sender;
    long long vc[MAX_NODES];
} held_msg;

static held_msg *held;
static int n_held, cap_held;

static void die(const char *what) {
    fprintf(stderr, "causal_broadcast (%s): %s\n", me[0] ? me : "?", what);
    exit(1);
}

static void print_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20) printf("\\u%04x", (unsigned char)*s);
        else putchar(*s);
    }
    putchar('"');
}

/* Starts a message to dest: {"src": me, "dest": dest, "body": {"type": TYPE; the caller
   writes the body's other fields and then "}}\n". */
static void begin(const char *dest, const char *type) {
    printf("{\"src\":");
    print_string(me);
    printf(",\"dest\":");
    print_string(dest);
    printf(",\"body\":{\"type\":");
    print_string(type);
}

static void reply(const json *msg, const char *type) {
    json *id = get(get(msg, "body"), "msg_id");
    begin(get_str(msg, "src"), type);
    if (id && id->kind == J_NUM) printf(",\"in_reply_to\":%lld", id->num);
}

static void deliver(long long value) {
    if (n_delivered == cap_delivered) {
        cap_delivered = cap_delivered ? 2 * cap_delivered : 16;
        delivered = realloc(delivered, cap_delivered * sizeof *delivered);
        if (!delivered) die("out of memory");
    }
    delivered[n_delivered++] = value;
}

static int deliverable(const held_msg *h) {
    if (h->vc[h->sender] != clock_[h->sender] + 1) return 0;
    for (int k = 0; k < nodes; k++)
        if (k != h->sender && h->vc[k] > clock_[k]) return 0;
    return 1;
}

static void handle(const json *msg) {
    const json *body = get(msg, "body");
    const char *type = get_str(body, "type");
    if (!type || !get_str(msg, "src")) die("a message without src or body.type");
    if (strcmp(type, "init") == 0) {
        const char *id = get_str(body, "node_id");
        const json *all = get(body, "node_ids");
        if (!id || !all || all->kind != J_ARR || all->len > MAX_NODES) die("init without node_id or node_ids");
        snprintf(me, sizeof me, "%s", id);
        nodes = all->len;
        self = -1;
        for (int k = 0; k < nodes; k++) {
            if (all->items[k]->kind != J_STR) die("node_ids holds a non-string");
            snprintf(ids[k], sizeof ids[k], "%s", all->items[k]->str);
            if (strcmp(ids[k], me) == 0) self = k;
        }
        if (self < 0) die("node_id is not in node_ids");
        reply(msg, "init_ok");
        printf("}}\n");
        fprintf(stderr, "%s: started, %d nodes\n", me, nodes);
    } else if (strcmp(type, "topology") == 0) {
        reply(msg, "topology_ok");
        printf("}}\n");
    } else if (strcmp(type, "broadcast") == 0) {
        const json *v = get(body, "message");
        if (!v || v->kind != J_NUM) die("broadcast of a value that is not an integer");
        clock_[self]++;
        deliver(v->num);
        for (int k = 0; k < nodes; k++) {
            if (k == self) continue;
            begin(ids[k], "cb");
            printf(",\"message\":%lld,\"sender\":%d,\"vc\":[", v->num, self);
            for (int i = 0; i < nodes; i++) printf("%s%lld", i ? "," : "", clock_[i]);
            printf("]}}\n");
        }
        reply(msg, "broadcast_ok");
        printf("}}\n");
    } else if (strcmp(type, "cb") == 0) {
        const json *v = get(body, "message"), *s = get(body, "sender"), *vc = get(body, "vc");
        if (!v || v->kind != J_NUM || !s || s->kind != J_NUM || s->num < 0 || s->num >= nodes || !vc ||
            vc->kind != J_ARR || vc->len != nodes)
            die("a cb message without message, sender or vc");
        if (n_held == cap_held) {
            cap_held = cap_held ? 2 * cap_held : 8;
            held = realloc(held, cap_held * sizeof *held);
            if (!held) die("out of memory");
        }
        held_msg *h = &held[n_held++];
        h->value = v->num;
        h->sender = (int)s->num;
        for (int k = 0; k < nodes; k++) h->vc[k] = vc->items[k]->kind == J_NUM ? vc->items[k]->num : 0;
        for (int progress = 1; progress;) {
            progress = 0;
            for (int i = 0; i < n_held; i++) {
                if (!deliverable(&held[i])) continue;
                deliver(held[i].value);
                if (held[i].vc[held[i].sender] > clock_[held[i].sender])
                    clock_[held[i].sender] = held[i].vc[held[i].sender];
                fprintf(stderr, "%s: delivered %lld from %s\n", me, held[i].value, ids[held[i].sender]);
                held[i] = held[--n_held];
                progress = 1;
                break;
            }
        }
    } else if (strcmp(type, "read") == 0) {
        reply(msg, "read_ok");
        printf(",\"messages\":[");
        for (int i = 0; i < n_delivered; i++) printf("%s%lld", i ? "," : "", delivered[i]);
        printf("]}}\n");
    }
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) != -1) {
        parser ps = {line, 0};
        json *msg = parse_value(&ps);
        if (!msg || msg->kind != J_OBJ) die("a line that is not a JSON object");
        handle(msg);
        json_free(msg);
        fflush(stdout);
    }
    free(line);
    return 0;
}
