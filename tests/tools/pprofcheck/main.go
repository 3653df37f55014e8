// pprofcheck: read each profile as the fleet's scrapers do, with
// google/pprof's profile package (Parca's scraper calls its ParseData on
// every scrape; Alloy and Pyroscope read the same wire format with
// decoders of their own), and print what they would see.
//
//	pprofcheck [-legacy] [-v] FILE|URL...
//
// For each input, one line:
//
//	INPUT: ok http=200 ctype=application/octet-stream gzip=yes proto=yes
//	  parca_ids=yes types=inuse_objects/count,inuse_space/bytes
//	  default=inuse_space period=space/bytes:524288 samples=N
//	  locations=N mappings=N loc_mapped=all|K/N buildids=K/N
//	  duration_ns=N time_ns=N labels=KEY:N,...|none sums=S1,S2,...
//	  comments="C1; C2"
//
// (one line, wrapped here), and on a failure "INPUT: FAIL reason", after
// the ok line when the failure is in what it shows. A URL is fetched with
// GET; any status but 200 is a failure, as it is a failed scrape to Parca
// (Alloy takes any 2xx). ParseData falls back to pprof's legacy text
// parsers (gperftools' heap, CPU, contention...) when the bytes are no
// protobuf, so an input must also be a protobuf unless -legacy is given.
// parca_ids is Parca's own check of the wire format, which ParseData's
// renumbering would hide: ids 1, 2, 3... in order, string_table[0] "".
// labels are the string label keys on the samples, each with how many
// values it takes (a scraper's series); sums each sample type's total.
// The exit status is 1 if any input failed, 2 on a usage error.
//
// Build it offline in GOPATH mode against Debian's
// golang-github-google-pprof-dev (see tests/integration/pprof_check.sh):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -o pprofcheck .
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"io/ioutil"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// read fetches a URL (status and Content-Type too) or reads a file.
func read(in string) (body []byte, status int, ctype string, err error) {
	if !strings.HasPrefix(in, "http://") && !strings.HasPrefix(in, "https://") {
		body, err = ioutil.ReadFile(in)
		return body, 0, "", err
	}
	c := &http.Client{Timeout: 120 * time.Second}
	resp, err := c.Get(in)
	if err != nil {
		return nil, 0, "", err
	}
	defer resp.Body.Close()
	body, err = ioutil.ReadAll(resp.Body)
	return body, resp.StatusCode, resp.Header.Get("Content-Type"), err
}

// gunzip: the body, gunzipped if it is gzip.
func gunzip(data []byte) ([]byte, error) {
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		return data, nil
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return ioutil.ReadAll(gz)
}

// isProto: is the (gunzipped) body a protobuf Profile, not one of the
// legacy text formats ParseData would also take?
func isProto(data []byte) bool {
	data, err := gunzip(data)
	if err != nil {
		return false
	}
	_, err = profile.ParseUncompressed(data)
	return err == nil
}

// varint reads a protobuf varint at b[i:]; n is 0 if there is none.
func varint(b []byte, i int) (x uint64, n int) {
	for s := uint(0); i+n < len(b) && s < 64; s += 7 {
		c := b[i+n]
		n++
		x |= uint64(c&0x7f) << s
		if c < 0x80 {
			return x, n
		}
	}
	return 0, 0
}

// fields calls fn for each top-level field of message b (wire types 0,
// 1, 2 and 5); false if b is no well-formed message.
func fields(b []byte, fn func(num int, wire int, v uint64, sub []byte)) bool {
	for i := 0; i < len(b); {
		key, n := varint(b, i)
		if n == 0 {
			return false
		}
		i += n
		num, wire := int(key>>3), int(key&7)
		switch wire {
		case 0:
			v, n := varint(b, i)
			if n == 0 {
				return false
			}
			i += n
			fn(num, wire, v, nil)
		case 1:
			i += 8
		case 5:
			i += 4
		case 2:
			l, n := varint(b, i)
			if n == 0 || uint64(len(b)-i-n) < l {
				return false
			}
			i += n
			fn(num, wire, 0, b[i:i+int(l)])
			i += int(l)
		default:
			return false
		}
		if i > len(b) {
			return false
		}
	}
	return true
}

// parcaIDs checks the wire format as Parca's normalizer does
// (ValidatePprofProfile in pkg/normalizer/validate.go) before
// ParseData's postDecode renumbers anything: the string table starts
// with "", and mappings, locations and functions have ids 1, 2, 3... in
// the order they come. "" if so, else what is not.
func parcaIDs(data []byte) string {
	data, err := gunzip(data)
	if err != nil {
		return "gunzip: " + err.Error()
	}
	next := map[int]uint64{3: 1, 4: 1, 5: 1}
	names := map[int]string{3: "mapping", 4: "location", 5: "function"}
	bad, first := "", true
	ok := fields(data, func(num, wire int, _ uint64, sub []byte) {
		if num == 6 && wire == 2 && first {
			first = false
			if len(sub) != 0 && bad == "" {
				bad = fmt.Sprintf("string_table[0] is %q, not \"\"", sub)
			}
		}
		if _, ok := next[num]; !ok || wire != 2 {
			return
		}
		var id uint64
		fields(sub, func(n, w int, v uint64, _ []byte) {
			if n == 1 && w == 0 {
				id = v
			}
		})
		if id != next[num] && bad == "" {
			bad = fmt.Sprintf("%s id %d where Parca wants %d (ids in order from 1)",
				names[num], id, next[num])
		}
		next[num]++
	})
	if !ok && bad == "" {
		bad = "not a well-formed protobuf message"
	}
	return bad
}

func yesno(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// check prints INPUT's line; false if it failed.
func check(w io.Writer, in string, legacy, verbose bool) bool {
	body, status, ctype, err := read(in)
	if err != nil {
		fmt.Fprintf(w, "%s: FAIL read: %v\n", in, err)
		return false
	}
	head := ""
	if status != 0 {
		head = fmt.Sprintf(" http=%d ctype=%s", status, ctype)
		if status != 200 {
			fmt.Fprintf(w, "%s: FAIL%s: %.200q\n", in, head, body)
			return false
		}
	}
	gz := len(body) >= 2 && body[0] == 0x1f && body[1] == 0x8b
	p, err := profile.ParseData(body)
	if err != nil {
		fmt.Fprintf(w, "%s: FAIL%s gzip=%s bytes=%d ParseData: %v\n", in,
			head, yesno(gz), len(body), err)
		return false
	}
	// ParseData runs it already; run it again so the check stands if
	// a later pprof stops doing so inside ParseData.
	if err := p.CheckValid(); err != nil {
		fmt.Fprintf(w, "%s: FAIL%s CheckValid: %v\n", in, head, err)
		return false
	}
	proto := isProto(body)
	parca, parcaWhy := "n/a", ""
	if proto {
		parca = "yes"
		if parcaWhy = parcaIDs(body); parcaWhy != "" {
			parca = "no"
		}
	}
	var types []string
	for _, t := range p.SampleType {
		types = append(types, t.Type+"/"+t.Unit)
	}
	period := "none"
	if p.PeriodType != nil {
		period = p.PeriodType.Type + "/" + p.PeriodType.Unit
	}
	mapped := 0
	for _, l := range p.Location {
		if l.Mapping != nil {
			mapped++
		}
	}
	locMapped := fmt.Sprintf("%d/%d", mapped, len(p.Location))
	if mapped == len(p.Location) {
		locMapped = "all"
	}
	files, ids := 0, 0
	for _, m := range p.Mapping {
		if m.File != "" {
			files++
			if m.BuildID != "" {
				ids++
			}
		}
	}
	// Each label key's values, and each type's sum over the samples.
	values := map[string]map[string]bool{}
	sums := make([]int64, len(p.SampleType))
	for _, s := range p.Sample {
		for k, vs := range s.Label {
			if values[k] == nil {
				values[k] = map[string]bool{}
			}
			for _, v := range vs {
				values[k][v] = true
			}
		}
		for i, v := range s.Value {
			if i < len(sums) {
				sums[i] += v
			}
		}
	}
	var labels, sumv []string
	for k, vs := range values {
		labels = append(labels, fmt.Sprintf("%s:%d", k, len(vs)))
	}
	sort.Strings(labels)
	if len(labels) == 0 {
		labels = []string{"none"}
	}
	for _, v := range sums {
		sumv = append(sumv, fmt.Sprintf("%d", v))
	}
	def := p.DefaultSampleType
	if def == "" {
		def = "(none: last type)"
	}
	fmt.Fprintf(w, "%s: ok%s gzip=%s proto=%s parca_ids=%s types=%s "+
		"default=%s period=%s:%d samples=%d locations=%d mappings=%d "+
		"loc_mapped=%s buildids=%d/%d duration_ns=%d time_ns=%d "+
		"labels=%s sums=%s comments=%q\n",
		in, head, yesno(gz), yesno(proto), parca, strings.Join(types, ","),
		def, period, p.Period, len(p.Sample), len(p.Location),
		len(p.Mapping), locMapped, ids, files, p.DurationNanos, p.TimeNanos,
		strings.Join(labels, ","), strings.Join(sumv, ","),
		strings.Join(p.Comments, "; "))
	if verbose {
		for _, m := range p.Mapping {
			fmt.Fprintf(w, "  mapping %d: %#x-%#x +%#x %q build_id=%q\n",
				m.ID, m.Start, m.Limit, m.Offset, m.File, m.BuildID)
		}
	}
	if !proto && !legacy {
		fmt.Fprintf(w, "%s: FAIL not a protobuf profile (pprof took it "+
			"through a legacy text parser)\n", in)
		return false
	}
	if parcaWhy != "" {
		fmt.Fprintf(w, "%s: FAIL Parca's validation: %s\n", in, parcaWhy)
		return false
	}
	return true
}

func main() {
	legacy := flag.Bool("legacy", false,
		"accept pprof's legacy text formats, not only protobuf")
	verbose := flag.Bool("v", false, "list every mapping too")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: pprofcheck [-legacy] [-v] FILE|URL...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	ok := true
	for _, in := range flag.Args() {
		if !check(os.Stdout, in, *legacy, *verbose) {
			ok = false
		}
	}
	if !ok {
		os.Exit(1)
	}
}
