/*
 * pprof's profile.proto (github.com/google/pprof, proto/profile.proto),
 * encoded by hand. The format needs four things of protobuf (varints,
 * length-delimited fields, packed repeated varints, nested messages), a
 * hundred-odd lines, which is what Go's own runtime/pprof does rather
 * than carry a protobuf library; protobuf-c would add a dependency, a
 * code generator and a copy of the schema for less code than it saves.
 *
 * The profile is streamed, not built: a Profile's fields may come in any
 * order and its repeated ones interleaved (a decoder appends each to its
 * list as it meets it), so each Function, Location, string and Sample is
 * encoded on its own as soon as it is first needed and deflated straight
 * to the file. What stays in memory is what dedup needs: the strings,
 * and tables from (name, system name, file) to a function and from an
 * address to a location. The Mappings go last, when what their
 * locations had (names, files, lines) is known.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "render.h"
#include "render_pprof.h"

/* profile.proto's field numbers. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,
	LABEL_KEY = 1,
	LABEL_STR = 2,
	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,
	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

/* Wire types. */
#define PB_VARINT 0
#define PB_LEN 2

/* One message being encoded. */
struct pb_buf {
	unsigned char *p;
	size_t n, cap;
	int oom; /* a byte could not be added: the message is lost */
};

/* Append @p n bytes. */
static void pb_raw(struct pb_buf *b, const void *p, size_t n)
{
	if (hp_grow((void **)&b->p, &b->cap, b->n + n, 1) == -1) {
		b->oom = 1;
		return;
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

/* Encode @p x in 7-bit groups, low first, the high bit saying "more". */
static size_t pb_encode_varint(unsigned char *p, uint64_t x)
{
	size_t n = 0;

	while (x >= 0x80) {
		p[n++] = (unsigned char)(x | 0x80);
		x >>= 7;
	}
	p[n++] = (unsigned char)x;
	return n;
}

static void pb_varint(struct pb_buf *b, uint64_t x)
{
	unsigned char v[10];

	pb_raw(b, v, pb_encode_varint(v, x));
}

/* A varint field. proto3 leaves a zero out (the reader's default), and so
 * do we: ids start at 1 and string index 0 is "". An int64 goes as its
 * two's complement (10 bytes when negative): profile.proto's values are
 * int64, not sint64. */
static void pb_uint(struct pb_buf *b, int field, uint64_t x)
{
	if (x == 0)
		return;
	pb_varint(b, (uint64_t)field << 3 | PB_VARINT);
	pb_varint(b, x);
}

/* A length-delimited field: a string, a nested message or a packed
 * repeated field, whose bytes are @p p. */
static void pb_bytes(struct pb_buf *b, int field, const void *p, size_t n)
{
	pb_varint(b, (uint64_t)field << 3 | PB_LEN);
	pb_varint(b, n);
	pb_raw(b, p, n);
}

/* The gzip stream the profile goes out through. */
struct gz {
	FILE *out;
	z_stream z;
	int err; /* the errno of the first failure, sticky */
	unsigned char buf[1 << 16];
};

/* Deflate @p n bytes into the file (@p flush Z_FINISH ends the stream).
 * Messages are small, so @p n fits zlib's uInt. */
static int gz_write(struct gz *g, const void *p, size_t n, int flush)
{
	size_t have;
	int r;

	if (g->err != 0)
		return -1;
	g->z.next_in = (Bytef *)(uintptr_t)p;
	g->z.avail_in = (uInt)n;
	do {
		g->z.next_out = g->buf;
		g->z.avail_out = sizeof(g->buf);
		if ((r = deflate(&g->z, flush)) == Z_STREAM_ERROR) {
			g->err = EIO;
			return -1;
		}
		have = sizeof(g->buf) - g->z.avail_out;
		if (have > 0 && fwrite(g->buf, 1, have, g->out) != have) {
			g->err = errno != 0 ? errno : EIO;
			return -1;
		}
	} while (
	    g->z.avail_out == 0 || (flush == Z_FINISH && r != Z_STREAM_END));
	return 0;
}

/* One interned string. */
struct pp_str {
	char *s;
	size_t len;
};

/* A key of three numbers and its id (0 until the caller sets it). */
struct pp_kv {
	uint64_t k[3];
	uint64_t id;
};

/* The keys met, in order, and a hash table of them. */
struct pp_tab {
	struct pp_kv *e;
	size_t cap, n;
	struct hmap ix; /* hash of a key -> index in e */
};

/* An executable mapping and what its locations turned out to have. */
struct pp_map {
	const struct hp_map *m;
	uint64_t id;
	int fn, fl, ln, in; /* has_functions, _filenames, ... */
};

/* The encoder's state for one profile. */
struct pprof {
	struct gz gz;
	struct symbolizer *sym;
	struct pb_buf head, loc, line, fn, sample, packed, locids, label;
	struct pp_str *strs; /* by index: the string table */
	size_t nstrs, cap_strs;
	struct hmap str_ix; /* hash of a string -> index in strs */
	struct pp_tab funcs, locs;
	struct pp_map *maps;      /* the executable ones, in profile order */
	struct pp_map **by_start; /* the same, by address */
	size_t nmaps;
	int labels;          /* a "thread" label on each sample */
	uint64_t thread_key; /* "thread" in the string table */
	struct hmap names;   /* tid -> index of its name in hp->threads */
	double sum[4];       /* each value's unsampled sum so far */
	long long put[4];    /* and what the samples so far got of it */
	int err;             /* errno of the first failure, sticky */
};

/* Write message @p b as field @p field of the Profile, and empty it. */
static void pp_emit(struct pprof *w, int field, struct pb_buf *b)
{
	unsigned char h[20];
	size_t n;

	if (b->oom && w->err == 0)
		w->err = ENOMEM;
	if (w->err == 0) {
		n = pb_encode_varint(h, (uint64_t)field << 3 | PB_LEN);
		n += pb_encode_varint(h + n, b->n);
		if (gz_write(&w->gz, h, n, Z_NO_FLUSH) == -1 ||
		    gz_write(&w->gz, b->p, b->n, Z_NO_FLUSH) == -1)
			w->err = w->gz.err;
	}
	b->n = 0;
	b->oom = 0;
}

/* What pp_string looks for. */
struct pp_strkey {
	const struct pprof *w;
	const char *s;
	size_t len;
};

/* Is string @p i the one in @p arg? */
static int pp_str_eq(const void *arg, uint64_t i)
{
	const struct pp_strkey *k = arg;
	const struct pp_str *e = &k->w->strs[i];

	return e->len == k->len && memcmp(e->s, k->s, k->len) == 0;
}

/* The string table's index of @p s (@p len bytes), which is added and
 * written out if new; 0 (the "" every table starts with) on a failure,
 * which is in w->err. */
static uint64_t pp_string(struct pprof *w, const char *s, size_t len)
{
	struct pp_strkey k = {w, s, len};
	uint64_t h = hash_bytes(s, len), *i;
	struct pp_str *e;

	if (w->err != 0)
		return 0;
	if ((i = hmap_find(&w->str_ix, h, pp_str_eq, &k)) != NULL)
		return *i;
	if (hp_grow((void **)&w->strs, &w->cap_strs, w->nstrs + 1,
	        sizeof(*w->strs)) == -1 ||
	    (w->strs[w->nstrs].s = malloc(len + 1)) == NULL) {
		w->err = ENOMEM;
		return 0;
	}
	e = &w->strs[w->nstrs];
	memcpy(e->s, s, len);
	e->s[len] = '\0';
	e->len = len;
	if ((i = hmap_add(&w->str_ix, h, pp_str_eq, &k, NULL)) == NULL) {
		free(e->s);
		w->err = ENOMEM;
		return 0;
	}
	*i = w->nstrs++;
	pb_bytes(&w->head, PROFILE_STRING_TABLE, s, len);
	if (!w->head.oom && w->err == 0 &&
	    gz_write(&w->gz, w->head.p, w->head.n, Z_NO_FLUSH) == -1)
		w->err = w->gz.err;
	if (w->head.oom && w->err == 0)
		w->err = ENOMEM;
	w->head.n = 0;
	w->head.oom = 0;
	return w->nstrs - 1;
}

static uint64_t pp_str(struct pprof *w, const char *s)
{
	return pp_string(w, s, strlen(s));
}

/* What pp_tab_get looks for. */
struct pp_kvkey {
	const struct pp_tab *t;
	uint64_t k[3];
};

/* Is key @p i the one in @p arg? */
static int pp_kv_eq(const void *arg, uint64_t i)
{
	const struct pp_kvkey *q = arg;

	return memcmp(q->t->e[i].k, q->k, sizeof(q->k)) == 0;
}

/* The entry of key (@p a, @p b, @p c): its id is 0 if the key is new
 * (the caller sets it). NULL when memory runs out. */
static struct pp_kv *pp_tab_get(struct pp_tab *t, uint64_t a, uint64_t b,
    uint64_t c)
{
	struct pp_kvkey q = {t, {a, b, c}};
	struct pp_kv *e;
	uint64_t *i;
	int added;

	if (hp_grow((void **)&t->e, &t->cap, t->n + 1, sizeof(*t->e)) == -1 ||
	    (i = hmap_add(&t->ix, hash_int(hash_int(hash_int(a) ^ b) ^ c),
	         pp_kv_eq, &q, &added)) == NULL)
		return NULL;
	if (!added)
		return &t->e[*i];
	*i = t->n;
	e = &t->e[t->n++];
	memcpy(e->k, q.k, sizeof(q.k));
	e->id = 0;
	return e;
}

/* Did the symbolizer name this frame? Its fallback is the address in
 * hex (an address in no object): such a frame is left to whoever reads
 * the profile, with the mapping and build ID to do it (no Line, as pprof
 * has it for an unsymbolized address). A function no symbol contains is
 * named, "object+0xSTART", and keeps its address in the
 * Location and its object in the Mapping, so a symbolizer given the
 * unstripped object names it later (go tool pprof -symbolize=force). */
static int pp_named(const struct sym_frame *f)
{
	return f->raw != NULL && strncmp(f->raw, "0x", 2) != 0;
}

/* The Function of frame @p f, written out if new; 0 on a failure. */
static uint64_t pp_function(struct pprof *w, const struct sym_frame *f)
{
	static const char mark[] = " (inline)";
	size_t len = strlen(f->func), ml = sizeof(mark) - 1;
	uint64_t name, sys, file;
	struct pp_kv *e;

	/* pprof marks inlined frames itself (a Line that is not its
	 * Location's last), so the name goes without jeprof's mark. */
	if (len > ml && strcmp(f->func + len - ml, mark) == 0)
		len -= ml;
	name = pp_string(w, f->func, len);
	sys = pp_str(w, f->raw);
	file = f->file != NULL ? pp_str(w, f->file) : 0;
	if (w->err != 0)
		return 0;
	if ((e = pp_tab_get(&w->funcs, name, sys, file)) == NULL) {
		w->err = ENOMEM;
		return 0;
	}
	if (e->id != 0)
		return e->id;
	pb_uint(&w->fn, FUNCTION_ID, w->funcs.n);
	pb_uint(&w->fn, FUNCTION_NAME, name);
	pb_uint(&w->fn, FUNCTION_SYSTEM_NAME, sys);
	pb_uint(&w->fn, FUNCTION_FILENAME, file);
	pp_emit(w, PROFILE_FUNCTION, &w->fn);
	if (w->err != 0)
		return 0;
	return e->id = w->funcs.n;
}

/* The executable mapping holding @p pc, or NULL. */
static struct pp_map *pp_map_of(struct pprof *w, uint64_t pc)
{
	size_t lo = 0, hi = w->nmaps, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (pc < w->by_start[mid]->m->start)
			hi = mid;
		else if (pc >= w->by_start[mid]->m->end)
			lo = mid + 1;
		else
			return w->by_start[mid];
	}
	return NULL;
}

/*
 * The Location of the @p n frames @p fr (one address, its inline chain
 * innermost first, as pprof's Lines go), written out if new; 0 on a
 * failure.
 *
 * Its address: the leaf's as dumped, a caller's minus 1. A caller's pc
 * is a return address, the instruction after the call, which may be on
 * another line or in another (inlined) function; pprof takes a
 * Location's address as an instruction of its own: its legacy-profile
 * parsers subtract 1 from return addresses themselves, Go's runtime
 * writes the call's PC (runtime.Frame.PC), and a server that symbolizes
 * (pprof's own symbolizer, Parca, Pyroscope) looks the address up as
 * given. So the address is the one we looked up, and a server finds the
 * same function and line we did. A pc that is a leaf in one stack and a
 * caller in another is then two Locations, as it is two lookups here.
 */
static uint64_t pp_location(struct pprof *w, const struct render_frame *fr,
    size_t n)
{
	uint64_t addr = fr[0].pc - (fr[0].depth > 0), fid;
	struct pp_map *m;
	struct pp_kv *e;
	size_t i;

	if ((e = pp_tab_get(&w->locs, addr, 0, 0)) == NULL) {
		w->err = ENOMEM;
		return 0;
	}
	if (e->id != 0)
		return e->id;
	m = pp_map_of(w, fr[0].pc);
	pb_uint(&w->loc, LOCATION_ID, w->locs.n);
	pb_uint(&w->loc, LOCATION_MAPPING_ID, m != NULL ? m->id : 0);
	pb_uint(&w->loc, LOCATION_ADDRESS, addr);
	for (i = 0; i < n; i++) {
		const struct sym_frame *f = &fr[i].f;
		if (!pp_named(f))
			continue;
		if ((fid = pp_function(w, f)) == 0)
			return 0;
		pb_uint(&w->line, LINE_FUNCTION_ID, fid);
		pb_uint(&w->line, LINE_LINE,
		    f->line > 0 ? (uint64_t)f->line : 0);
		pb_bytes(&w->loc, LOCATION_LINE, w->line.p, w->line.n);
		w->line.n = 0;
		if (w->line.oom)
			w->loc.oom = 1;
		if (m == NULL)
			continue;
		m->fn = 1;
		m->fl |= f->file != NULL;
		m->ln |= f->line > 0;
		/* Files and lines come from DWARF, and where there is
		 * DWARF the symbolizer expands inline chains. */
		m->in |= f->file != NULL || f->line > 0;
	}
	pp_emit(w, PROFILE_LOCATION, &w->loc);
	if (w->err != 0)
		return 0;
	return e->id = w->locs.n;
}

/* A ValueType {type, unit} as Profile field @p field. */
static void pp_value_type(struct pprof *w, int field, const char *type,
    const char *unit)
{
	uint64_t t = pp_str(w, type), u = pp_str(w, unit);

	pb_uint(&w->sample, VALUE_TYPE_TYPE, t);
	pb_uint(&w->sample, VALUE_TYPE_UNIT, u);
	pp_emit(w, field, &w->sample);
}

/* A top-level varint field. */
static void pp_top_uint(struct pprof *w, int field, uint64_t x)
{
	pb_uint(&w->head, field, x);
	if (w->head.oom && w->err == 0)
		w->err = ENOMEM;
	if (w->err == 0 && w->head.n > 0 &&
	    gz_write(&w->gz, w->head.p, w->head.n, Z_NO_FLUSH) == -1)
		w->err = w->gz.err;
	w->head.n = 0;
	w->head.oom = 0;
}

static int pp_by_start(const void *a, const void *b)
{
	const struct pp_map *x = *(struct pp_map *const *)a;
	const struct pp_map *y = *(struct pp_map *const *)b;

	return x->m->start < y->m->start ? -1 : x->m->start > y->m->start;
}

/* The executable mappings, ids from 1 in the profile's order (the main
 * program's first: pprof takes the first mapping for it). */
static int pp_maps_init(struct pprof *w, const struct heap_profile *hp)
{
	size_t i;

	w->maps = calloc(hp->nmaps ? hp->nmaps : 1, sizeof(*w->maps));
	w->by_start = calloc(hp->nmaps ? hp->nmaps : 1, sizeof(*w->by_start));
	if (w->maps == NULL || w->by_start == NULL)
		return -1;
	for (i = 0; i < hp->nmaps; i++) {
		if (!hp->maps[i].exec)
			continue;
		w->maps[w->nmaps].m = &hp->maps[i];
		w->maps[w->nmaps].id = w->nmaps + 1;
		w->by_start[w->nmaps] = &w->maps[w->nmaps];
		w->nmaps++;
	}
	qsort(w->by_start, w->nmaps, sizeof(*w->by_start), pp_by_start);
	return 0;
}

/* Every Mapping, with its build ID in hex (as `readelf -n` prints it,
 * and as pprof, Parca and debuginfod look objects up); the main
 * program's (@p hp's first path) file named @p main_file if not NULL. */
static void pp_mappings(struct pprof *w, const struct heap_profile *hp,
    const char *main_file)
{
	const char *main_path = NULL;
	static const char hex[] = "0123456789abcdef";
	const unsigned char *bits;
	char id[2 * 128 + 1];
	struct pb_buf *b = &w->loc;
	uint64_t file, build;
	size_t i, j, n;

	for (i = 0; main_path == NULL && i < hp->nmaps; i++)
		if (hp->maps[i].path[0] == '/')
			main_path = hp->maps[i].path;
	for (i = 0; i < w->nmaps && w->err == 0; i++) {
		const struct pp_map *m = &w->maps[i];
		n = m->m->path[0] == '/' ? sym_build_id(w->sym, m->m, &bits)
		                         : 0;
		if (n > 128)
			n = 0; /* not a GNU build ID (20 bytes, or 16) */
		for (j = 0; j < n; j++) {
			id[2 * j] = hex[bits[j] >> 4];
			id[2 * j + 1] = hex[bits[j] & 15];
		}
		file = pp_str(w,
		    main_file != NULL && main_path != NULL &&
		            strcmp(m->m->path, main_path) == 0
		        ? main_file
		        : m->m->path);
		build = pp_string(w, id, 2 * n);
		pb_uint(b, MAPPING_ID, m->id);
		pb_uint(b, MAPPING_MEMORY_START, m->m->start);
		pb_uint(b, MAPPING_MEMORY_LIMIT, m->m->end);
		pb_uint(b, MAPPING_FILE_OFFSET, m->m->offset);
		pb_uint(b, MAPPING_FILENAME, file);
		pb_uint(b, MAPPING_BUILD_ID, build);
		pb_uint(b, MAPPING_HAS_FUNCTIONS, (uint64_t)m->fn);
		pb_uint(b, MAPPING_HAS_FILENAMES, (uint64_t)m->fl);
		pb_uint(b, MAPPING_HAS_LINE_NUMBERS, (uint64_t)m->ln);
		pb_uint(b, MAPPING_HAS_INLINE_FRAMES, (uint64_t)m->in);
		pp_emit(w, PROFILE_MAPPING, b);
	}
}

/* The label value of thread @p tid: its name in the dump (as
 * render_line shows it, at most 255 bytes), else "t<N>" (jeprof's and
 * the dump's own name for it); 0 on a failure. */
static uint64_t pp_thread(struct pprof *w, const struct heap_profile *hp,
    uint64_t tid)
{
	uint64_t *i;
	char buf[256];

	/* The dump's name is any bytes; pprof shows it on a terminal (go
	 * tool pprof -tags) and wants UTF-8: as the threads view shows it. */
	if ((i = hmap_get(&w->names, tid)) != NULL &&
	    hp->threads[*i].name != NULL && hp->threads[*i].name[0] != '\0')
		return pp_str(w,
		    render_line_to(buf, sizeof(buf), hp->threads[*i].name));
	snprintf(buf, sizeof(buf), "t%llu", (unsigned long long)tid);
	return pp_str(w, buf);
}

/* One Sample of values @p x (@p nv of them), at the locations in
 * w->locids, labelled thread=@p thread (0: none). */
static void pp_emit_sample(struct pprof *w, const double *x, size_t nv,
    uint64_t thread)
{
	long long v[4];
	size_t i;
	int any = 0;

	/* pprof's values are integers and ours are not (1.4 objects,
	 * unsampled). Rounding each stack would be off by up to half a
	 * unit a stack, thousands of objects over a big profile; so each
	 * sample gets what rounding the running sum adds (error
	 * diffusion): every value stays within 1 of its own, and the
	 * total within 0.5 of jeprof's. */
	for (i = 0; i < nv; i++) {
		w->sum[i] += x[i];
		/* int64 values: past its ends (no parsed profile gets
		 * there, see render.h) the running sum saturates, and so
		 * does what a sample gets of it. */
		if (__builtin_sub_overflow(render_round(w->sum[i]), w->put[i],
		        &v[i]))
			v[i] = w->put[i] < 0 ? LLONG_MAX : -LLONG_MAX;
		w->put[i] += v[i];
		any |= v[i] != 0;
	}
	if (!any) /* nothing to count: pprof would drop it */
		return;
	if (w->locids.n > 0)
		pb_bytes(&w->sample, SAMPLE_LOCATION_ID, w->locids.p,
		    w->locids.n);
	for (i = 0; i < nv; i++)
		pb_varint(&w->packed, (uint64_t)v[i]);
	pb_bytes(&w->sample, SAMPLE_VALUE, w->packed.p, w->packed.n);
	w->sample.oom |= w->packed.oom | w->locids.oom;
	w->packed.n = 0;
	w->packed.oom = 0;
	if (thread != 0) {
		pb_uint(&w->label, LABEL_KEY, w->thread_key);
		pb_uint(&w->label, LABEL_STR, thread);
		pb_bytes(&w->sample, SAMPLE_LABEL, w->label.p, w->label.n);
		w->sample.oom |= w->label.oom;
		w->label.n = 0;
		w->label.oom = 0;
	}
	pp_emit(w, PROFILE_SAMPLE, &w->sample);
}

/* A stack's values, or a part of them: the accumulated pair first when
 * @p accum, each unsampled with its own scale (@p sa, @p sc). */
static size_t pp_values(double *x, int accum, double sa, double sc, uint64_t ao,
    uint64_t ab, uint64_t o, uint64_t b)
{
	size_t nv = 0;

	if (accum) {
		x[nv++] = render_clamp((double)ao * sa);
		x[nv++] = render_clamp((double)ab * sa);
	}
	x[nv++] = render_clamp((double)o * sc);
	x[nv++] = render_clamp((double)b * sc);
	return nv;
}

/* One Sample per stack with a value: its locations leaf first, then
 * its values in sample_type's order. With thread labels, one per
 * thread holding some of it, its part unsampled with the stack's scale
 * (as the text view splits it), and the rest, if the threads' lines do
 * not cover the stack, unlabelled: the values still add up. */
static void pp_sample(struct pprof *w, const struct heap_profile *hp,
    const struct hp_stack *st, struct render_view *vw, int accum)
{
	double x[4], rest[4], sa, sc;
	size_t nv = 0, i, j;
	uint64_t id, thread;
	int any = 0;

	if (accum) {
		rest[nv++] = render_clamp(st->u_accum_objs);
		rest[nv++] = render_clamp(st->u_accum_bytes);
	}
	rest[nv++] = render_clamp(st->u_objs);
	rest[nv++] = render_clamp(st->u_bytes);
	/* Nothing to count, no sample: each sample's rounding leaves the
	 * running sums rounded, so zeros add nothing. */
	for (j = 0; j < nv; j++)
		any |= rest[j] != 0;
	if (!any)
		return;
	if (render_view_stack(vw, st, w->sym) == -1) {
		w->err = ENOMEM;
		return;
	}
	/* A stack the allocator's frames were all of has no locations,
	 * but its bytes still count in the total, as in jeprof's. */
	w->locids.n = 0;
	for (i = 0; i < vw->n; i = j) {
		for (j = i + 1; j < vw->n && vw->f[j].depth == vw->f[i].depth;
		     j++)
			;
		if ((id = pp_location(w, &vw->f[i], j - i)) == 0)
			return;
		pb_varint(&w->locids, id);
	}
	if (w->labels && !hp->diff && render_threads_fit(st)) {
		/* heapprof's scales, on each thread's part. */
		sa =
		    heapprof_scale(st->accum_objs, st->accum_bytes, hp->period);
		sc = heapprof_scale(st->objs, st->bytes, hp->period);
		for (i = 0; i < st->ntc && w->err == 0; i++) {
			const struct hp_tcount *c = &st->tc[i];
			(void)pp_values(x, accum, sa, sc, c->accum_objs,
			    c->accum_bytes, c->objs, c->bytes);
			for (j = 0; j < nv; j++)
				rest[j] -= x[j];
			if ((thread = pp_thread(w, hp, c->tid)) != 0)
				pp_emit_sample(w, x, nv, thread);
		}
		/* What the lines cover is the stack up to rounding: a
		 * rest under a millionth of a unit is that. */
		for (j = 0; j < nv; j++)
			if (fabs(rest[j]) < 1e-6)
				rest[j] = 0;
	}
	if (w->err == 0)
		pp_emit_sample(w, rest, nv, 0);
}

/* Does the profile carry allocation totals? What the process said, else
 * what the dump's numbers say (jemalloc writes zeros without prof_accum). */
static int pp_accum(const struct heap_profile *hp, const struct pprof_opts *o)
{
	size_t k;

	if (o->accum != 0)
		return o->accum > 0;
	for (k = 0; k < hp->nstacks; k++)
		if (hp->stacks[k].accum_objs != 0 ||
		    hp->stacks[k].accum_bytes != 0)
			return 1;
	return 0;
}

int render_pprof(FILE *out, const struct heap_profile *hp,
    struct symbolizer *sym, const struct pprof_opts *o)
{
	static const struct pprof_opts none = {0};
	struct render_view vw = {0};
	const char *dflt;
	struct pprof *w;
	int accum = 0, rv = -1, zr;
	size_t k;

	sym_want_lines(sym); /* pprof's Line entries carry them */
	/* calloc, not the stack: the gzip buffer is 64 KiB. */
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return -1;
	w->gz.out = out;
	w->sym = sym;
	/* Go's level (gzip.BestSpeed): most of the time goes to
	 * symbolizing anyway, and the file is a tenth of its protobuf. */
	if ((zr = deflateInit2(&w->gz.z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8,
	         Z_DEFAULT_STRATEGY)) != Z_OK) {
		free(w);
		errno = zr == Z_MEM_ERROR ? ENOMEM : EINVAL;
		return -1;
	}
	if (pp_maps_init(w, hp) == -1)
		w->err = ENOMEM;
	if (o == NULL)
		o = &none;
	accum = pp_accum(hp, o);
	(void)pp_string(w, "", 0); /* index 0, as the format wants */
	/* Go's heap layout; alloc_* first, as Go and pprof's own heap
	 * parser put them, so tools that take the first or last type
	 * find inuse_space last. */
	if (accum) {
		pp_value_type(w, PROFILE_SAMPLE_TYPE, "alloc_objects", "count");
		pp_value_type(w, PROFILE_SAMPLE_TYPE, "alloc_space", "bytes");
	}
	pp_value_type(w, PROFILE_SAMPLE_TYPE, "inuse_objects", "count");
	pp_value_type(w, PROFILE_SAMPLE_TYPE, "inuse_space", "bytes");
	/* Only a type the profile has: zeros served as allocation data
	 * would read as "nothing allocated", which is a lie. */
	dflt = o->default_type != NULL ? o->default_type : "inuse_space";
	if (!accum && strncmp(dflt, "alloc_", 6) == 0)
		dflt = "inuse_space";
	pp_top_uint(w, PROFILE_DEFAULT_SAMPLE_TYPE, pp_str(w, dflt));
	if (!accum)
		pp_top_uint(w, PROFILE_COMMENT,
		    pp_str(w,
		        o->accum < 0
		            ? "no alloc_objects/alloc_space: jemalloc's "
		              "opt.prof_accum is off (start the process with "
		              "MALLOC_CONF=prof:true,prof_accum:true)"
		            : "no alloc_objects/alloc_space: the dump has no "
		              "accumulated counts (opt.prof_accum off?)"));
	if (o->note != NULL)
		pp_top_uint(w, PROFILE_COMMENT, pp_str(w, o->note));
	/* Whose: the process's own name beside the file it maps, which
	 * pprof prints under "File:" (a comment not starting "#"). */
	if (o->program != NULL)
		pp_top_uint(w, PROFILE_COMMENT, pp_str(w, o->program));
	/* Readers file a profile under its time (Parca stores time 0 at
	 * 1970); int64 fields, so a negative span would be a huge one. */
	if (o->time_ns > 0)
		pp_top_uint(w, PROFILE_TIME_NANOS, (uint64_t)o->time_ns);
	if (o->duration_ns > 0)
		pp_top_uint(w, PROFILE_DURATION_NANOS,
		    (uint64_t)o->duration_ns);
	pp_value_type(w, PROFILE_PERIOD_TYPE, "space", "bytes");
	/* An int64 field: a period past INT64_MAX (heap_v2 takes any
	 * uint64) would read back negative. */
	pp_top_uint(w, PROFILE_PERIOD,
	    hp->period > INT64_MAX ? (uint64_t)INT64_MAX : hp->period);
	/* Each thread's name by its number, for the labels. */
	w->labels = o->thread_labels && !hp->diff;
	if (w->labels) {
		w->thread_key = pp_str(w, "thread");
		for (k = 0; k < hp->nthreads && w->err == 0; k++) {
			uint64_t *slot =
			    hmap_put(&w->names, hp->threads[k].c.tid, NULL);
			if (slot == NULL)
				w->err = ENOMEM;
			else
				*slot = k;
		}
	}
	for (k = 0; k < hp->nstacks && w->err == 0; k++)
		pp_sample(w, hp, &hp->stacks[k], &vw, accum);
	pp_mappings(w, hp, o->main_file);
	if (w->err == 0 && gz_write(&w->gz, NULL, 0, Z_FINISH) == -1)
		w->err = w->gz.err;
	if (w->err == 0 && ferror(out))
		w->err = EIO;
	rv = w->err != 0 ? -1 : 0;
	if (rv == -1)
		errno = w->err;
	(void)deflateEnd(&w->gz.z);
	render_view_free(&vw);
	for (k = 0; k < w->nstrs; k++)
		free(w->strs[k].s);
	free(w->strs);
	hmap_free(&w->str_ix);
	free(w->funcs.e);
	hmap_free(&w->funcs.ix);
	free(w->locs.e);
	hmap_free(&w->locs.ix);
	free(w->maps);
	free(w->by_start);
	free(w->head.p);
	free(w->loc.p);
	free(w->line.p);
	free(w->fn.p);
	free(w->sample.p);
	free(w->packed.p);
	free(w->locids.p);
	free(w->label.p);
	hmap_free(&w->names);
	free(w);
	return rv;
}
