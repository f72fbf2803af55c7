package conformance

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// regCase is one register read by both tools. mstreg needs a value for
// every INDEX field of the register (union members included); cxray
// defaults local_port, lp_msb, pnat and the like, and takes fields inside a
// union by path.
type regCase struct {
	reg    string
	mstreg map[string]string // --indexes
	cxray  []string          // --index
}

func (c regCase) name() string {
	return strings.Join(append([]string{c.reg}, c.cxray...), "/")
}

// pddrIndexes are PDDR's INDEX fields as mstreg 4.21's ADB lists them; the
// ones after group_opcode belong to other pages of the page_data union.
func pddrIndexes(page, group string) map[string]string {
	m := map[string]string{"local_port": "1", "page_select": page, "port_type": "0", "pnat": "0", "lp_msb": "0", "group_opcode": group}
	for _, f := range []string{"tracer_mode", "pre_trigger_buff_mode", "trigger_cond_fsm", "trigger_cond_state_or_event",
		"trigger_cond_state_event_val", "pport", "fsm_mask"} {
		m[f] = "0"
	}
	return m
}

func portCases() []regCase {
	return []regCase{
		{"MGIR", nil, nil},
		{"PAOS", map[string]string{"local_port": "1", "lp_msb": "0", "swid": "0"}, nil},
		{"PTYS", map[string]string{"local_port": "1", "proto_mask": "4", "port_type": "0", "lp_msb": "0"}, []string{"proto_mask=4"}},
		{"PDDR", pddrIndexes("0", "0"), []string{"page_select=0"}},
		{"PDDR", pddrIndexes("1", "0"), []string{"page_select=1", "page_data.pddr_troubleshooting_page_ext.group_opcode=0"}},
		{"PDDR", pddrIndexes("1", "1"), []string{"page_select=1", "page_data.pddr_troubleshooting_page_ext.group_opcode=1"}},
		{"PDDR", pddrIndexes("3", "0"), []string{"page_select=3"}},
	}
}

func pmaosCase(module string) regCase {
	return regCase{"PMAOS", map[string]string{"module": module, "slot_index": "0"}, []string{"module=" + module}}
}

func indexArg(m map[string]string) string {
	var kv []string
	for k, v := range m {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}

// TestMstregVsRegGet reads MGIR, PMAOS, PAOS, PTYS and PDDR (operational,
// troubleshooting and module pages) with `mstreg --get` and `cxray reg get
// -o json --raw` on the same device, and compares every leaf mstreg prints
// with the value at the same place in cxray's JSON: rows are paired with
// cxray's leaves by position (from `mstreg --show_reg`) and name, so a
// field either tool places wrongly shows as a layout problem.
func TestMstregVsRegGet(t *testing.T) {
	need(t, "mstreg")
	for _, sc := range scenarios {
		t.Run(strings.TrimSuffix(sc.file, ".yaml"), func(t *testing.T) {
			type job struct {
				bdf string
				c   regCase
			}
			var jobs []job
			for i, bdf := range sc.bdfs {
				for _, c := range portCases() {
					jobs = append(jobs, job{bdf, c})
				}
				if i == 0 { // modules belong to the adapter, not to a function
					jobs = append(jobs, job{bdf, pmaosCase("0")}, job{bdf, pmaosCase("1")})
				}
			}
			var script strings.Builder
			regs := map[string]bool{}
			for i, j := range jobs {
				if !regs[j.c.reg] {
					regs[j.c.reg] = true
					fmt.Fprintf(&script, "run show_%s mstreg -d %s --show_reg %s\n", j.c.reg, sc.bdfs[0], j.c.reg)
				}
				m := []string{"mstreg", "-d", j.bdf, "--reg_name", j.c.reg, "--get"}
				if len(j.c.mstreg) > 0 {
					m = append(m, "--indexes", indexArg(j.c.mstreg))
				}
				x := []string{"cxray", "reg", "get", j.c.reg, "-d", j.bdf, "-o", "json", "--raw"}
				for _, ix := range j.c.cxray {
					x = append(x, "--index", ix)
				}
				fmt.Fprintf(&script, "run m%d %s\nrun c%d %s\n", i, shjoin(m...), i, shjoin(x...))
			}
			s := emuRun(t, sc.file, script.String(), 3*time.Minute)

			layouts := map[string][]MstregField{}
			for reg := range regs {
				l, err := ParseMstregShowReg(s.ok(t, "show_"+reg).stdout)
				if err != nil {
					t.Fatal(err)
				}
				layouts[reg] = l
			}
			totalCompared := 0
			for i, j := range jobs {
				t.Run(strings.ReplaceAll(j.bdf, ":", "_")+"/"+j.c.name(), func(t *testing.T) {
					checkIndexesGiven(t, j.c, layouts[j.c.reg])
					m := s.ok(t, fmt.Sprintf("m%d", i))
					x := s.ok(t, fmt.Sprintf("c%d", i))
					vals, err := ParseMstregGet(m.stdout)
					if err != nil {
						t.Fatal(err)
					}
					var doc struct {
						Fields map[string]any `json:"fields"`
					}
					cxrayJSON(t, x, &doc)
					r, err := database(t).Register(j.c.reg)
					if err != nil {
						t.Fatal(err)
					}
					plan, err := database(t).RegisterPlan(r)
					if err != nil {
						t.Fatal(err)
					}
					cmp, err := CompareRegister(j.c.reg, plan, vals, layouts[j.c.reg], doc.Fields)
					if err != nil {
						t.Fatal(err)
					}
					totalCompared += cmp.Compared
					if !cmp.OK() {
						t.Errorf("mstreg and cxray disagree on %s %s:\n%s\nmstreg --get:\n%s\ncxray reg get:\n%s", j.bdf, j.c.name(), cmp.Report(), m.stdout, x.stdout)
					} else {
						t.Log(cmp.Report())
					}
				})
			}
			t.Logf("%d leaves compared in %d register reads", totalCompared, len(jobs))
		})
	}
}

// checkIndexesGiven: the case gives mstreg every INDEX field its ADB has
// (otherwise mstreg refuses, and the case list is out of date).
func checkIndexesGiven(t *testing.T, c regCase, layout []MstregField) {
	t.Helper()
	for _, f := range layout {
		if f.Access == "INDEX" {
			if _, ok := c.mstreg[f.Name]; !ok {
				t.Errorf("%s: mstreg's ADB makes %s an INDEX field; add it to the case", c.reg, f.Name)
			}
		}
	}
}
