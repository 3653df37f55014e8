/*
 * cxx_host: a C++ program linked with libjemalloc that holds a heap built
 * the ways C++ builds one -- class templates instantiated over several
 * types, std::map / std::unordered_map / std::vector / std::string growth,
 * operator new and new[], an allocating function the compiler inlines
 * into its caller (-O2 -g: DWARF has the inline frames) -- and writes
 * two heap profiles with mallctl("prof.dump"), so
 * tests/integration/differential.sh can hold jm4lw-prof's reading of them
 * against jeprof's.
 *
 *	MALLOC_CONF=prof:true,lg_prof_sample:14 cxx_host A.heap B.heap
 *
 * A.heap is written after the first half of the heap is built, B.heap
 * after the second (more of the same, plus a "leak" only B has), so
 * jeprof --base=A B shows growth. Prints "cxx_host: ok" and exits 0, or
 * one line on stderr and exits 1 (profiling off, a dump that failed).
 */
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <jemalloc/jemalloc.h>

namespace cxxhost {

/* A templated value type: each instantiation is its own set of
 * functions, with its own mangled names. */
template <typename T, int N> struct Widget {
	T payload[N];
	std::string label;
	explicit Widget(int i) : label("widget-" + std::to_string(i))
	{
		for (int k = 0; k < N; k++)
			payload[k] = static_cast<T>(i + k);
	}
};

/* A templated container of them, grown one push_back at a time (the
 * vector's reallocation path). */
template <typename W> class Shelf {
      public:
	__attribute__((noinline)) void fill(int n)
	{
		for (int i = 0; i < n; i++)
			items_.push_back(std::make_unique<W>(i));
	}
	size_t size() const { return items_.size(); }

      private:
	std::vector<std::unique_ptr<W>> items_;
};

/* Always inlined into its callers: the allocation's innermost frame is
 * this function, which only DWARF knows about. */
static inline __attribute__((always_inline)) char *
inlined_buffer(size_t n, int fill)
{
	char *p = new char[n];
	memset(p, fill, n);
	return p;
}

__attribute__((noinline)) std::vector<char *> make_buffers(int n, size_t sz)
{
	std::vector<char *> v;
	for (int i = 0; i < n; i++)
		v.push_back(inlined_buffer(sz + (i % 7) * 64, i));
	return v;
}

/* std::string growth through append, kept in a std::map. */
__attribute__((noinline)) void grow_strings(
    std::map<std::string, std::string> &m, int n)
{
	for (int i = 0; i < n; i++) {
		std::string s;
		for (int k = 0; k < 40; k++)
			s += "some text to make the string grow ";
		m.emplace("key-" + std::to_string(i), std::move(s));
	}
}

/* Hash map nodes and their bucket array. */
__attribute__((noinline)) void index_numbers(
    std::unordered_map<long, std::vector<double>> &h, int n)
{
	for (int i = 0; i < n; i++)
		h[i * 7919L].assign(16 + i % 32, 1.5);
}

/* Plain operator new, outside any container. */
struct Blob {
	char bytes[4000];
};
__attribute__((noinline)) std::vector<Blob *> make_blobs(int n)
{
	std::vector<Blob *> v;
	for (int i = 0; i < n; i++)
		v.push_back(new Blob());
	return v;
}

/* Only in the second profile: what --base must show as grown. */
__attribute__((noinline)) std::vector<std::vector<int> *> leak_vectors(int n)
{
	std::vector<std::vector<int> *> v;
	for (int i = 0; i < n; i++)
		v.push_back(new std::vector<int>(2048, i));
	return v;
}

/* Many instantiations of one template: as many distinct stacks. */
template <int... Ns> struct Shelves {
	std::tuple<Shelf<Widget<short, Ns>>...> shelves;
	__attribute__((noinline)) void fill(int n)
	{
		std::apply([n](auto &...s) { (s.fill(n), ...); }, shelves);
	}
};

struct Heap {
	Shelves<3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610> many;
	Shelf<Widget<int, 64>> ints;
	Shelf<Widget<double, 32>> doubles;
	Shelf<Widget<char, 500>> chars;
	std::map<std::string, std::string> strings;
	std::unordered_map<long, std::vector<double>> numbers;
	std::vector<std::vector<char *>> buffers;
	std::vector<std::vector<Blob *>> blobs;
	std::vector<std::vector<int> *> leaked;
};

/* One half of the heap: about 25 MB. */
__attribute__((noinline)) void build(Heap &h, int round)
{
	h.many.fill(1500);
	h.ints.fill(20000);
	h.doubles.fill(20000);
	h.chars.fill(10000);
	grow_strings(h.strings, 5000 + round);
	index_numbers(h.numbers, 20000 * (round + 1));
	h.buffers.push_back(make_buffers(3000, 1000));
	h.blobs.push_back(make_blobs(1000));
}

int dump(const char *path)
{
	if (mallctl("prof.dump", nullptr, nullptr, &path, sizeof(path)) !=
	    0) {
		fprintf(stderr, "cxx_host: prof.dump to %s failed\n", path);
		return -1;
	}
	return 0;
}

} // namespace cxxhost

int main(int argc, char *argv[])
{
	bool prof = false;
	size_t len = sizeof(prof);

	if (argc != 3) {
		fprintf(stderr, "usage: cxx_host A.heap B.heap\n");
		return 2;
	}
	if (mallctl("opt.prof", &prof, &len, nullptr, 0) != 0 || !prof) {
		fprintf(stderr, "cxx_host: profiling is off (MALLOC_CONF="
		                "prof:true)\n");
		return 1;
	}
	/* Kept to the end: the heap the profiles show. */
	static cxxhost::Heap *heap = new cxxhost::Heap;
	cxxhost::build(*heap, 0);
	if (cxxhost::dump(argv[1]) == -1)
		return 1;
	cxxhost::build(*heap, 1);
	heap->leaked = cxxhost::leak_vectors(3000);
	if (cxxhost::dump(argv[2]) == -1)
		return 1;
	printf("cxx_host: ok (%zu widgets)\n",
	    heap->ints.size() + heap->doubles.size() + heap->chars.size());
	return 0;
}
