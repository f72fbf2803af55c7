package explain

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/nvconf/querytext"
)

// noiseOnly keeps the lines that are noise next to fixture: prose that no
// kind's anchor takes (alone or followed by the fixture), no prompt, fence,
// kernel line or JSON.
func noiseOnly(text string, fixture []string) []string {
	var out []string
	for _, l := range strings.Split(strings.NewReplacer("\r", "", "\x1b", "").Replace(text), "\n") {
		t := strings.TrimSpace(l)
		if len(out) > 20 || t == "" || t[0] == '{' || t[0] == '[' || querytext.IsCommandLine(t) || fenceRE.MatchString(l) || isKernelLine(l) || strings.Contains(t, "```") {
			continue
		}
		ctx := append([]string{l}, fixture...)
		anchored := false
		for _, k := range kinds {
			if k.anchor(ctx, 0) || k.anchor([]string{l}, 0) {
				anchored = true
			}
		}
		if !anchored {
			out = append(out, l)
		}
	}
	return out
}

// FuzzDetectNoise: the kinds detected in a fixture do not change when
// noise lines surround it.
//
//	go test -fuzz=FuzzDetectNoise ./feature/explain
func FuzzDetectNoise(f *testing.F) {
	names := fixtures(f)
	f.Add(uint8(0), "Hi, this is what I see on the node:", "thanks in advance")
	f.Add(uint8(3), "output below\n\n", "\nany idea?\nthe cable was replaced last week")
	f.Add(uint8(7), "  I ran it twice", "Regards,\n-- \nsent from my phone")
	d := dbs(f)
	f.Fuzz(func(t *testing.T, which uint8, before, after string) {
		if len(before)+len(after) > 4096 {
			return
		}
		name := names[int(which)%len(names)]
		text := fixture(t, name)
		flines := strings.Split(strings.TrimRight(text, "\n"), "\n")
		base, _ := Explain(text, d)
		pre := noiseOnly(before, flines)
		post := noiseOnly(after, nil)
		in := strings.Join(append(append(append([]string{}, pre...), flines...), post...), "\n") + "\n"
		r, err := Explain(in, d)
		if err != nil {
			t.Fatal(err)
		}
		from, to := len(pre)+1, len(pre)+len(flines)
		var got []string
		for _, p := range r.Parts {
			if p.To >= from && p.From <= to {
				got = append(got, p.Kind)
			}
		}
		if diff := cmp.Diff(kindsOf(base), got); diff != "" {
			t.Fatalf("%s with noise %q / %q: kinds (-alone +with noise):\n%s\n%s", name, pre, post, diff, strings.Join(summary(r), "\n"))
		}
	})
}

// FuzzExplain: any text explains without a panic; no part the detector
// calls partial gets a verdict on hardware or firmware; every finding has a
// category and says what; kernel events lie inside their part.
//
//	go test -fuzz=FuzzExplain ./feature/explain
func FuzzExplain(f *testing.F) {
	for _, n := range fixtures(f) {
		text := fixture(f, n)
		f.Add(text)
		f.Add(text[:len(text)/2])
	}
	d := dbs(f)
	cats := map[string]bool{CatSoftware: true, CatConfig: true, CatFirmware: true, CatHardware: true, CatInput: true}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1<<16 {
			return
		}
		r, err := Explain(text, d)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range r.Parts {
			checkPartial(t, "fuzz", p)
			for _, fd := range p.Findings {
				if !cats[fd.Category] || fd.What == "" {
					t.Fatalf("%s: finding without a category or text: %+v", p.Kind, fd)
				}
			}
			for _, e := range p.Events {
				if e.Line < p.From || e.Line > p.To {
					t.Fatalf("event at line %d outside its part %d-%d", e.Line, p.From, p.To)
				}
			}
		}
	})
}

// FuzzKernelReader: the kernel reader gives exactly one command event per
// command-failure line, whatever surrounds it, and decodes its status as
// printed.
//
//	go test -fuzz=FuzzKernelReader ./feature/explain
func FuzzKernelReader(f *testing.F) {
	f.Add("[  1.0] mlx5_core 0000:03:00.0: f:1:(pid 1): CREATE_CQ(0x400) op_mod(0x0) failed, status limits exceeded(0x8), syndrome (0x11), err(-12)\n", 0)
	f.Add(fixture(f, "dmesg-cmd.txt"), 2)
	f.Add(fixture(f, "dmesg-health.txt")+fixture(f, "dmesg-cqe.txt"), 0)
	d := dbs(f)
	f.Fuzz(func(t *testing.T, text string, _ int) {
		if len(text) > 1<<15 {
			return
		}
		want := 0
		for _, l := range splitLines(text) {
			if cmdFailRE.MatchString(l) {
				want++
			}
		}
		p := &Part{Kind: KindKernelLog, From: 1, text: splitLines(text)}
		p.To = len(p.text)
		readKernelLog(p, d)
		got := 0
		for _, e := range p.Events {
			if e.Class == ClassCommand && cmdFailRE.MatchString(e.Message) {
				got++
				m := cmdFailRE.FindStringSubmatch(e.Message)
				if m == nil || !strings.Contains(factValue(e.Fields, "status"), "0x"+strings.TrimLeft(strings.ToLower(m[6]), "0")) && hexU(m[6]) != 0 {
					t.Fatalf("status not decoded as printed: %q -> %v", e.Message, e.Fields)
				}
			}
		}
		if got != want {
			t.Fatalf("%d command-failure lines, %d events", want, got)
		}
	})
}

func factValue(fs []Fact, name string) string {
	for _, f := range fs {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}
