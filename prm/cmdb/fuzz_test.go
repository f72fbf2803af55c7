package cmdb

import (
	"strings"
	"testing"
)

// A small generated part, so each fuzz run is fast.
const fuzzBase = "rev\tfuzz\nnode\tbase\t256\t\nf\topcode\t16\t16\t\nop\tQUERY_X\t256\t-\t-\n"

// FuzzHandwritten: the hand-written facts syntax never panics, and every
// field of every layout it accepts compiles to exactly the position and
// width its line gives (the dwN[msb:lsb] and 0xBYTE/BITS conversions round
// trip through the ADB convention and the plan compiler).
//
//	go test -fuzz=FuzzHandwritten ./prm/cmdb
func FuzzHandwritten(f *testing.F) {
	f.Add("layout\tx\t128\nf\ta\tdw0[31:16]\nf\tb\tdw1[3]\nf\tc\t0x8/64\n")
	f.Add("layout\tx\t64\nf\tq\t0x0/32\tsub=base\n")
	f.Add("extend\tbase\nf\tz\tdw3[7:0]\nop\tQUERY_Y\t0x10\t-\t-\ncap\tT\t3\tbase\nscope\tQUERY_Y\tany\tdebug_read_only\tquery\n")
	f.Add("layout\tv\t96\nf\tp\t0x4/32\tvar\nf\te\tdw0[3:0]\tenum=A:1,B:2\n")
	f.Add(nvmfFacts)
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1<<14 {
			return
		}
		db, err := Build("fuzz", fuzzBase, text, "")
		if err != nil {
			return
		}
		var cur string
		for _, l := range strings.Split(text, "\n") {
			cols := strings.Split(l, "\t")
			switch {
			case cols[0] == "layout" && len(cols) == 3:
				cur = cols[1]
			case cols[0] == "extend":
				cur = ""
			case cols[0] == "f" && cur != "" && len(cols) >= 3:
				bit, width, err := parsePos(cols[2])
				if err != nil {
					t.Fatalf("%q accepted but its position does not parse: %v", l, err)
				}
				p, err := db.Plan(cur)
				if err != nil {
					continue // a layout the codec refuses (a subnode cycle, a bad size)
				}
				var found bool
				for _, s := range p.Root.Children {
					if s.Field != nil && s.Name == cols[1] {
						found = true
						w := s.Width
						if s.Elem != nil {
							w = s.Elem.Width
						}
						if s.Bit != bit || w != width {
							t.Fatalf("%s.%s at %d/%d, the line says %d/%d", cur, cols[1], s.Bit, w, bit, width)
						}
					}
				}
				if !found {
					t.Fatalf("%s.%s accepted but missing from the plan", cur, cols[1])
				}
			}
		}
	})
}

// FuzzGeneratedFacts: the generated-facts records (op, cap, stat, const)
// never panic the reader, and every op record of a database that builds
// is found by its opcode and name with the layouts it names.
//
//	go test -fuzz=FuzzGeneratedFacts ./prm/cmdb
func FuzzGeneratedFacts(f *testing.F) {
	f.Add(fuzzBase + "op\tQUERY_Y\t0x10\tbase\t-\ncap\tT\t3\tbase\nstat\tOK\t0\nconst\tMLX5_X\t-1\n")
	f.Add(fuzzBase + "op\tQUERY_Y\t65536\t-\t-\n")
	f.Add(fuzzBase + "cap\tT\t99999\t-\nstat\tS\t300\n")
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1<<14 {
			return
		}
		db, err := Build("fuzz", text, "", "")
		if err != nil {
			return
		}
		for _, l := range strings.Split(text, "\n") {
			cols := strings.Split(l, "\t")
			if cols[0] != "op" || len(cols) != 5 {
				continue
			}
			c, err := db.Command(cols[1])
			if err != nil {
				t.Fatalf("op %s accepted but not found: %v", cols[1], err)
			}
			if byOp, ok := db.CommandByOpcode(c.Opcode); !ok || byOp.Opcode != c.Opcode {
				t.Fatalf("opcode 0x%x of %s not found", c.Opcode, c.Name)
			}
			for _, n := range []string{c.In, c.Out} {
				if n != "" {
					if _, err := db.Plan(n); err != nil {
						t.Fatalf("%s names layout %s that does not compile: %v", c.Name, n, err)
					}
				}
			}
		}
	})
}
