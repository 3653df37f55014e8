/*
 * gvc_load: libgvc.so.6 loaded on the first call graph drawn as SVG,
 * with the two plugins that drawing needs (the dot layout, the core
 * renderers), once, under pthread_once; each drawing under one mutex.
 * Why not linked: see gvc_load.h.
 *
 * Loaded with dlmopen into a link-map namespace of its own, not with
 * dlopen: in the host's namespace Graphviz's calls bind to the host's
 * exported functions first, and hosts export names Graphviz has too,
 * meaning something else (redis-server, linked -rdynamic, exports
 * zmalloc, which does not zero as Graphviz's does, and a zrealloc of
 * two arguments where Graphviz's takes four: the layout crashed the
 * host). RTLD_DEEPBIND would prefer Graphviz's own names but hand it
 * libc's malloc while libc's strdup still calls the host's (jemalloc),
 * freeing one's memory with the other's free. In its own namespace it
 * sees only itself and its own copy of libc (whose malloc maps its own
 * memory, not the host allocator's), and nothing crosses but a string
 * in and one out, which it frees itself.
 */
#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gvc_load.h"

/*
 * Graphviz's types and the functions called, declared here rather than
 * taken from gvc.h and cgraph.h (libgraphviz-dev): the graph and the
 * context are only passed back to Graphviz, so they stay opaque. The
 * signatures are Graphviz's since 2.30 (libgvc.so.6) but for
 * gvRenderData's length, an unsigned int * there and a size_t * since
 * Graphviz 3: it is handed a zeroed size_t and not read (the SVG is
 * text: its length is strlen's).
 */
typedef struct GVC_s GVC_t;
typedef struct Agraph_s Agraph_t;
typedef int (*gvc_errf_t)(char *msg);

static struct {
	GVC_t *(*gvContextPlugins)(const void *builtins, int demand_loading);
	void (*gvAddLibrary)(GVC_t *gvc, void *lib);
	Agraph_t *(*agmemread)(const char *text);
	int (*gvLayout)(GVC_t *gvc, Agraph_t *g, const char *engine);
	int (*gvRenderData)(GVC_t *gvc, Agraph_t *g, const char *format,
	    char **result, void *length);
	void (*gvFreeRenderData)(char *data);
	int (*gvFreeLayout)(GVC_t *gvc, Agraph_t *g);
	int (*agclose)(Agraph_t *g);
	gvc_errf_t (*agseterrf)(gvc_errf_t f);
} gv;

/* The plugins, by file (in the graphviz/ directory beside libgvc) and
 * the library table each exports. Only these: gvContext() would load
 * every plugin its config lists on demand, the text-layout one (pango,
 * cairo, fontconfig and their fonts' cache) at once; without it dot
 * sizes labels from its own font metrics, which is what a call graph
 * needs. */
static const struct {
	const char *file, *sym;
} gvc_plugins[] = {
    {"libgvplugin_dot_layout.so.6", "gvplugin_dot_layout_LTX_library"},
    {"libgvplugin_core.so.6", "gvplugin_core_LTX_library"},
};

static GVC_t *gvc;
static char gvc_why[512];
static pthread_once_t gvc_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t gvc_lock = PTHREAD_MUTEX_INITIALIZER;
/* Graphviz's last complaint, under gvc_lock: it reports through
 * agseterrf's callback instead of stderr, which is the host's. */
static char gvc_msg[256];

/* agseterrf's callback: keep the first line of the first message. */
static int gvc_errf(char *msg)
{
	if (gvc_msg[0] == '\0' && msg != NULL)
		snprintf(gvc_msg, sizeof(gvc_msg), "%.*s",
		    (int)strcspn(msg, "\n"), msg);
	return 0;
}

/* pthread_once: open libgvc and its two plugins, make the context. */
static void gvc_load_once(void)
{
	const char *name = secure_getenv("JM4LW_GVC_LIB");
	char dir[PATH_MAX], path[PATH_MAX + 64];
	void *lib, *plug, *fn;
	const char *dl;
	char *slash;
	Dl_info info;
	Lmid_t lmid;
	size_t i;

	if (name == NULL || name[0] == '\0')
		name = GVC_SONAME;
	if ((lib = dlmopen(LM_ID_NEWLM, name, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		snprintf(gvc_why, sizeof(gvc_why),
		    "%.200s cannot be loaded: %.250s", name, dlerror());
		return;
	}
	if (dlinfo(lib, RTLD_DI_LMID, &lmid) == -1) {
		snprintf(gvc_why, sizeof(gvc_why), "%.200s: %.250s", name,
		    dlerror());
		goto fail;
	}
	/* dlsym on the handle searches libgvc's dependencies too:
	 * libcgraph's agmemread, agclose and agseterrf. */
#define GVC_LOOKUP(f)                                                          \
	if ((fn = dlsym(lib, #f)) == NULL) {                                   \
		snprintf(gvc_why, sizeof(gvc_why),                             \
		    "%s cannot be used: it has no %s", name, #f);              \
		goto fail;                                                     \
	}                                                                      \
	memcpy(&gv.f, &fn, sizeof(fn));
	GVC_LOOKUP(gvContextPlugins)
	GVC_LOOKUP(gvAddLibrary)
	GVC_LOOKUP(agmemread)
	GVC_LOOKUP(gvLayout)
	GVC_LOOKUP(gvRenderData)
	GVC_LOOKUP(gvFreeRenderData)
	GVC_LOOKUP(gvFreeLayout)
	GVC_LOOKUP(agclose)
	GVC_LOOKUP(agseterrf)
#undef GVC_LOOKUP
	/* The plugins are where Graphviz installs them: graphviz/ beside
	 * the libgvc that was loaded. */
	if (dladdr(fn, &info) == 0 || info.dli_fname == NULL) {
		snprintf(gvc_why, sizeof(gvc_why),
		    "%s: cannot tell where it was loaded from", name);
		goto fail;
	}
	snprintf(dir, sizeof(dir), "%s", info.dli_fname);
	if ((slash = strrchr(dir, '/')) != NULL)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	gv.agseterrf(gvc_errf);
	if ((gvc = gv.gvContextPlugins(NULL, 0)) == NULL) {
		snprintf(gvc_why, sizeof(gvc_why),
		    "%s: gvContextPlugins failed", name);
		goto fail;
	}
	for (i = 0; i < sizeof(gvc_plugins) / sizeof(gvc_plugins[0]); i++) {
		snprintf(path, sizeof(path), "%s/graphviz/%s", dir,
		    gvc_plugins[i].file);
		if ((plug = dlmopen(lmid, path, RTLD_NOW | RTLD_LOCAL)) ==
		        NULL ||
		    (fn = dlsym(plug, gvc_plugins[i].sym)) == NULL) {
			dl = dlerror();
			snprintf(gvc_why, sizeof(gvc_why),
			    "Graphviz's plugin %.200s cannot be loaded: %.200s",
			    path, dl != NULL ? dl : "no library table in it");
			gvc = NULL; /* kept, not freed: its plugins may be in */
			return;
		}
		gv.gvAddLibrary(gvc, fn);
	}
	return;
fail:
	dlclose(lib);
}

/* The call graph as SVG (see gvc_load.h). */
int gvc_svg(const char *dot, FILE *out, char *err, size_t errlen)
{
	Agraph_t *g;
	char *svg = NULL;
	size_t len = 0;
	int r = -1;

	(void)pthread_once(&gvc_once, gvc_load_once);
	if (gvc == NULL) {
		snprintf(err, errlen, "%s", gvc_why);
		return GVC_MISSING;
	}
	pthread_mutex_lock(&gvc_lock);
	gvc_msg[0] = '\0';
	if ((g = gv.agmemread(dot)) == NULL) {
		snprintf(err, errlen, "Graphviz cannot read the call graph: %s",
		    gvc_msg[0] ? gvc_msg : "no reason given");
		goto out;
	}
	if (gv.gvLayout(gvc, g, "dot") != 0) {
		snprintf(err, errlen,
		    "Graphviz cannot lay out the call graph: %s",
		    gvc_msg[0] ? gvc_msg : "no reason given");
		gv.agclose(g);
		goto out;
	}
	if (gv.gvRenderData(gvc, g, "svg", &svg, &len) != 0 || svg == NULL)
		snprintf(err, errlen, "Graphviz cannot draw the call graph: %s",
		    gvc_msg[0] ? gvc_msg : "no reason given");
	else if (fwrite(svg, 1, strlen(svg), out) != strlen(svg))
		snprintf(err, errlen, "cannot write the call graph");
	else
		r = 0;
	if (svg != NULL)
		gv.gvFreeRenderData(svg);
	gv.gvFreeLayout(gvc, g);
	gv.agclose(g);
out:
	pthread_mutex_unlock(&gvc_lock);
	return r;
}
