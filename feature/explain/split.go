package explain

import (
	"encoding/json"
	"strings"

	"github.com/cxray/cxray/internal/lazyre"
	"github.com/cxray/cxray/nvconf/querytext"
)

// kind is one kind of input: how its first line looks (anchor, which may
// look ahead), which lines after it still belong to it, and its reader.
type kind struct {
	title   string
	anchor  func(ls []string, i int) bool
	belongs func(l string) bool
	read    func(p *Part, dbs Databases)
	// commands are words of a pasted command line that name this kind
	// ("ethtool -m" → ethtool-m); the piece under such a line is read
	// whole as this kind.
	commands [][]string
}

// order is the order anchors are tried in: the more specific first.
var order = []string{
	KindKernelLog, KindMlxconfig, KindNVBackup, KindFirmwareQuery, KindEthtoolModule,
	KindMlxlink, KindLspci, KindSfputil, KindDevlinkHealth, KindRdmaQP,
	KindOSListing, KindCxrayMonitor, KindRegisterDump,
}

var kinds = map[string]*kind{}

func register(name string, k *kind) { kinds[name] = k }

var (
	fenceRE  = lazyre.New("^\\s*(```|~~~)")
	kvLineRE = lazyre.New(`^\s*[A-Za-z0-9][^:]{0,70}?\s*:\s*\S?`)
)

func blank(l string) bool { return strings.TrimSpace(l) == "" }

func indented(l string) bool { return len(l) > 0 && (l[0] == ' ' || l[0] == '\t') && !blank(l) }

// Split cuts lines into parts and counts the lines no part took.
func Split(lines []string) ([]*Part, int) {
	var parts []*Part
	unrec := 0
	// Pieces: a shell prompt with a command, or a code fence, starts one.
	type piece struct {
		from, to int // [from, to)
		command  string
	}
	var pieces []piece
	cur := piece{}
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case fenceRE.MatchString(l):
			cur.to = i
			pieces = append(pieces, cur)
			cur = piece{from: i + 1}
		case querytext.IsCommandLine(t) && !isKernelLine(l):
			cur.to = i
			pieces = append(pieces, cur)
			cur = piece{from: i + 1, command: t}
		}
	}
	cur.to = len(lines)
	pieces = append(pieces, cur)
	for _, pc := range pieces {
		if len(parts) >= maxParts {
			break
		}
		body := lines[pc.from:pc.to]
		first, last := -1, -1
		for i, l := range body {
			if !blank(l) {
				if first < 0 {
					first = i
				}
				last = i
			}
		}
		if first < 0 {
			continue
		}
		// A command line says what follows, unless what follows is
		// clearly another kind (ethtool -m prints decoded text or hex).
		ps, u := scan(lines, pc.from, pc.to)
		if k := commandKind(pc.command); k != "" && (len(ps) == 0 || u*4 > last-first+1 || !hasKind(ps, k) && !anchoredWhole(ps, first+pc.from, last+pc.from)) {
			parts = append(parts, newPart(k, lines, pc.from+first, pc.from+last, pc.command))
			continue
		}
		if k := jsonKind(strings.Join(body[first:last+1], "\n")); k != "" {
			parts = append(parts, newPart(k, lines, pc.from+first, pc.from+last, pc.command))
			continue
		}
		// A JSON document with prose on the lines next to it ("here is the
		// output:" with no blank line): the document is one part, and the
		// lines around it are read as any other lines.
		if k, a, b := jsonSpan(body[first : last+1]); k != "" {
			a, b = pc.from+first+a, pc.from+first+b
			pre, u1 := scan(lines, pc.from+first, a)
			post, u2 := scan(lines, b+1, pc.from+last+1)
			parts = append(parts, pre...)
			parts = append(parts, newPart(k, lines, a, b, pc.command))
			parts = append(parts, post...)
			unrec += u1 + u2
			continue
		}
		if len(ps) > 0 && pc.command != "" {
			ps[0].Command = pc.command
		}
		parts = append(parts, ps...)
		unrec += u
	}
	return parts, unrec
}

func hasKind(ps []*Part, k string) bool {
	for _, p := range ps {
		if p.Kind == k {
			return true
		}
	}
	return false
}

// anchoredWhole says the parts found cover the piece from its first line to
// its last.
func anchoredWhole(ps []*Part, first, last int) bool {
	return len(ps) > 0 && ps[0].From == first+1 && ps[len(ps)-1].To == last+1
}

func newPart(k string, lines []string, from, to int, command string) *Part {
	return &Part{Kind: k, Title: kinds[k].title, From: from + 1, To: to + 1, Command: command, text: lines[from : to+1], Findings: []Finding{}, Facts: []Fact{}}
}

// scan finds the anchored parts of lines[from:to].
func scan(lines []string, from, to int) ([]*Part, int) {
	var parts []*Part
	unrec := 0
	for i := from; i < to; {
		if blank(lines[i]) {
			i++
			continue
		}
		var k string
		for _, name := range order {
			if kinds[name].anchor(lines[:to], i) {
				k = name
				break
			}
		}
		if k == "" {
			unrec++
			i++
			continue
		}
		last := i
		for j := i + 1; j < to; j++ {
			l := lines[j]
			if blank(l) {
				continue
			}
			if k != KindKernelLog && (isKernelLine(l) || otherAnchor(lines[:to], j, k)) {
				break
			}
			if !kinds[k].belongs(l) {
				break
			}
			last = j
		}
		parts = append(parts, newPart(k, lines, i, last, ""))
		i = last + 1
	}
	return parts, unrec
}

// otherAnchor says line j starts a part of another kind that should not be
// swallowed (a kernel line inside a tool output, an mlxconfig table after
// a flint query).
func otherAnchor(ls []string, j int, k string) bool {
	for _, name := range []string{KindMlxconfig, KindFirmwareQuery, KindNVBackup, KindLspci, KindEthtoolModule, KindMlxlink} {
		if name != k && kinds[name].anchor(ls, j) {
			// A firmware query's "Device #" block is anchored by both.
			if (k == KindFirmwareQuery && name == KindMlxconfig) || (k == KindMlxconfig && name == KindFirmwareQuery) {
				continue
			}
			return true
		}
	}
	return false
}

// commandKind maps a pasted command line to a kind.
func commandKind(cmd string) string {
	if cmd == "" {
		return ""
	}
	words := strings.Fields(strings.ToLower(cmd))
	for _, name := range order {
		for _, c := range kinds[name].commands {
			if containsWords(words, c) {
				return name
			}
		}
	}
	return ""
}

// containsWords says every word of want appears in words, each matching a
// word exactly or as a path's last element (/usr/bin/ethtool).
func containsWords(words, want []string) bool {
	for _, w := range want {
		found := false
		for _, x := range words {
			if x == w || strings.HasSuffix(x, "/"+w) || strings.HasSuffix(x, "\\"+w) || (strings.HasSuffix(w, "*") && strings.HasPrefix(x, strings.TrimSuffix(w, "*"))) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// jsonSpan finds a JSON document of a kind explain reads inside body: from
// the first line that opens an object or array to the last that closes
// one. It returns the kind and the document's first and last line, or ""
// when there is none.
func jsonSpan(body []string) (string, int, int) {
	a, b := -1, -1
	for i, l := range body {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if a < 0 && (t[0] == '{' || t[0] == '[') {
			a = i
		}
		if a >= 0 && (t[len(t)-1] == '}' || t[len(t)-1] == ']') {
			b = i
		}
	}
	if a < 0 || b < a {
		return "", 0, 0
	}
	return jsonKind(strings.Join(body[a:b+1], "\n")), a, b
}

// jsonKind recognises the JSON documents explain reads by their keys.
func jsonKind(t string) string {
	t = strings.TrimSpace(t)
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return ""
	}
	// JSON lines (monitor files).
	if first, _, ok := strings.Cut(t, "\n"); ok && strings.HasPrefix(strings.TrimSpace(first), "{") {
		var o map[string]json.RawMessage
		if json.Unmarshal([]byte(first), &o) == nil && o["time"] != nil && o["device"] != nil && o["values"] != nil {
			return KindCxrayMonitor
		}
	}
	var v any
	if err := json.Unmarshal([]byte(t), &v); err != nil {
		// A document cut short: decide by its opening keys.
		switch {
		case strings.Contains(t, `"format"`) && strings.Contains(t, "cxray-snapshot"):
			return KindCxraySnapshot
		case strings.Contains(t, `"result"`) && strings.Contains(t, `"output"`):
			return KindMlxlink
		case strings.Contains(t, `"time"`) && strings.Contains(t, `"values"`):
			return KindCxrayMonitor
		}
		return ""
	}
	switch x := v.(type) {
	case map[string]any:
		switch {
		case x["devices"] != nil && strings.HasPrefix(str(x["format"]), "cxray"):
			return KindCxraySnapshot
		case x["result"] != nil:
			return KindMlxlink
		case x["health"] != nil:
			return KindDevlinkHealth
		case x["time"] != nil && x["values"] != nil:
			return KindCxrayMonitor
		case x["fields"] != nil || x["register"] != nil || x["data"] != nil:
			return KindRegisterDump
		}
	case []any:
		if len(x) > 0 {
			if o, ok := x[0].(map[string]any); ok {
				switch {
				case o["lqpn"] != nil:
					return KindRdmaQP
				case o["ifname"] != nil && o["address"] != nil:
					return KindOSListing
				}
			}
		}
	}
	return ""
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// lookahead says whether one of the next n lines after i matches f.
func lookahead(ls []string, i, n int, f func(string) bool) bool {
	for j := i + 1; j < len(ls) && j <= i+n; j++ {
		if f(ls[j]) {
			return true
		}
	}
	return false
}

func trimmed(l string) string { return strings.TrimSpace(l) }
