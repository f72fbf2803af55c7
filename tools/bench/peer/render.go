package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/cxray/cxray/prm/builtin"
)

// Targets from issue 4.
const (
	targetOps  = 0.6     // cxray's config accesses per register access, relative to mstflint's
	targetWall = 1.0 / 3 // cxray's wall time per command, relative to mstflint's
)

// Targets from issue 19.
const (
	target19RegMedian = 0.20 // single-register wall time against mstreg's, median over the five
	target19RegMax    = 0.30 // ... and none above
	target19ModWall   = 0.40 // cxray module against mstlink -m
	target19ModOps    = 0.60
	target19Startup   = 2.0 // start-up against a Go hello world
)

type stats struct {
	ops, opsMin, opsMax float64 // config-space calls per command
	cycles              float64 // dword config cycles per command
	regs                float64 // access-register requests per command
	ms                  float64 // median wall time per command
	total               *Tally  // summed over the runs
	n                   int
}

func summarize(runs []run) stats {
	s := stats{total: newTally(), n: len(runs), opsMin: -1}
	var ms []float64
	for _, r := range runs {
		o := float64(r.Tally.Ops())
		s.ops += o
		s.cycles += float64(r.Tally.Cycles)
		s.regs += float64(r.Tally.RegisterAccesses())
		if s.opsMin < 0 || o < s.opsMin {
			s.opsMin = o
		}
		s.opsMax = max(s.opsMax, o)
		ms = append(ms, r.MS)
		s.total.add(r.Tally)
	}
	if n := float64(len(runs)); n > 0 {
		s.ops /= n
		s.cycles /= n
		s.regs /= n
	}
	s.ms = median(ms)
	return s
}

func (s stats) opsText() string {
	if s.opsMax-s.opsMin < 0.5 {
		return fmt.Sprintf("%.0f", s.ops)
	}
	return fmt.Sprintf("%.0f (%.0f–%.0f)", s.ops, s.opsMin, s.opsMax)
}

func perReg(v, regs float64) float64 {
	if regs == 0 {
		return 0
	}
	return v / regs
}

func ratio(c, m float64) string {
	if m == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", c/m)
}

func short(argv []string) string {
	a := append([]string(nil), argv...)
	a[0] = filepath.Base(a[0])
	for i, x := range a {
		if strings.HasPrefix(x, os.TempDir()+"/") {
			a[i] = filepath.Base(x) // files the run made for itself
		}
	}
	s := strings.Join(a, " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

func yes(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

// render writes the Markdown tables.
func render(pl plan, res results, env []string) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("\n")
	for _, e := range env {
		p("- %s\n", e)
	}
	p("- %d runs of each command after one warm-up run, the two tools alternating; wall time is the median, counts the mean (a range when runs differed)\n\n", pl.N)

	p("### Per command\n\n")
	p("Config accesses are pread/pwrite calls on the function's sysfs `config` file, each one FUSE request to the emulator (one or more config cycles on hardware); dword cycles are the aligned config cycles those calls split into on a PCI bus (an 8-byte read is two).\n\n")
	p("| job | mstflint tool | cxray | config accesses: mstflint | cxray | ratio | dword cycles: mstflint | cxray | ratio | wall ms: mstflint | cxray | ratio |\n")
	p("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	type row struct {
		name string
		m, c stats
		pair pair
	}
	var rows []row
	for _, pr := range pl.Pairs {
		r := row{pr.Name, summarize(res.Mst[pr.Name]), summarize(res.Cxray[pr.Name]), pr}
		rows = append(rows, r)
		cxName := "`" + short(pr.Cxray) + "`"
		if pr.CxNote != "" {
			cxName += " (" + pr.CxNote + ")"
		}
		p("| %s | `%s` | %s | %s | %s | %s | %.0f | %.0f | %s | %.1f | %.1f | %s |\n", r.name, short(pr.Mst), cxName,
			r.m.opsText(), r.c.opsText(), ratio(r.c.ops, r.m.ops), r.m.cycles, r.c.cycles, ratio(r.c.cycles, r.m.cycles),
			r.m.ms, r.c.ms, ratio(r.c.ms, r.m.ms))
	}

	p("\n### The targets of issue 19\n\n")
	var regRatios []float64
	tgt := func(what, measured, target string, ok bool) {
		p("| %s | %s | %s | %s |\n", what, measured, target, yes(ok))
	}
	p("| target | measured | target | verdict |\n|---|---|---|---|\n")
	var regText []string
	for _, r := range rows {
		if r.pair.Same && r.m.regs == 1 && r.m.ms > 0 {
			regRatios = append(regRatios, r.c.ms/r.m.ms)
			regText = append(regText, fmt.Sprintf("%s %.2f", r.name, r.c.ms/r.m.ms))
		}
	}
	if len(regRatios) > 0 {
		mx := 0.0
		for _, x := range regRatios {
			mx = max(mx, x)
		}
		tgt("single-register `reg get` wall time against mstreg's, median", fmt.Sprintf("%.2f (%s)", median(regRatios), strings.Join(regText, ", ")),
			fmt.Sprintf("≤ %.2f", target19RegMedian), median(regRatios) <= target19RegMedian)
		tgt("single-register `reg get`, the largest", fmt.Sprintf("%.2f", mx), fmt.Sprintf("≤ %.2f", target19RegMax), mx <= target19RegMax)
	}
	for _, r := range rows {
		switch {
		case r.name == "module info" && r.m.ms > 0 && r.m.ops > 0:
			tgt("`cxray module` wall time against `mstlink -m`", ratio(r.c.ms, r.m.ms), fmt.Sprintf("≤ %.2f", target19ModWall), r.c.ms/r.m.ms <= target19ModWall)
			tgt("`cxray module` config accesses against `mstlink -m`", ratio(r.c.ops, r.m.ops), fmt.Sprintf("≤ %.2f", target19ModOps), r.c.ops/r.m.ops <= target19ModOps)
		case r.pair.Baseline && r.m.ms > 0:
			tgt(fmt.Sprintf("start-up of `%s` against a Go hello world (%.1f ms)", short(r.pair.Cxray), r.m.ms),
				fmt.Sprintf("%.1f ms, %.2f×", r.c.ms, r.c.ms/r.m.ms), fmt.Sprintf("≤ %.0f×", target19Startup), r.c.ms/r.m.ms <= target19Startup)
		}
	}

	p("\n### Per register access, and the targets\n\n")
	p("Targets (issue 4): cxray at most %.1f of mstflint's config accesses per register access, and at most 1/3 of its wall time per command. "+
		"The access target is judged where both tools read the same registers: one register per command, and mstlink -m's 13 "+
		"register reads done by cxray in one process; on the other jobs the tools read different registers, so their per-access figures are shown "+
		"but do not compare.\n\n", targetOps)
	p("| job | register accesses per command: mstflint | cxray | config accesses per register access: mstflint | cxray | ratio | target ≤ 0.6 | wall-time ratio | target ≤ 0.33 |\n")
	p("|---|--:|--:|--:|--:|--:|---|--:|---|\n")
	for _, r := range rows {
		if r.pair.Baseline {
			continue
		}
		mo, co := perReg(r.m.ops, r.m.regs), perReg(r.c.ops, r.c.regs)
		wr := 0.0
		if r.m.ms > 0 {
			wr = r.c.ms / r.m.ms
		}
		opsVerdict := yes(mo > 0 && co/mo <= targetOps)
		if !r.pair.Same {
			opsVerdict = "not like for like"
		}
		p("| %s | %.1f | %.1f | %.0f | %.0f | %s | %s | %.2f | %s |\n", r.name, r.m.regs, r.c.regs, mo, co, ratio(co, mo),
			opsVerdict, wr, yes(wr <= targetWall))
	}

	for _, r := range rows {
		if !r.pair.Same || r.m.regs < 2 {
			continue
		}
		p("\n**%s**: config accesses per register access, by register. Each access is counted from the end of the previous one "+
			"(its reply read-back included) to the firmware taking it; the first access of each command, which also opens the device, "+
			"is left out, so these are the costs of one more register in a running process.\n\n", r.name)
		p("| register | accesses per command: mstflint | cxray | median config accesses: mstflint | cxray | ratio |\n|---|--:|--:|--:|--:|--:|\n")
		mseg, cseg := segments(res.Mst[r.name]), segments(res.Cxray[r.name])
		var all []string
		for k := range mseg {
			all = append(all, k)
		}
		for k := range cseg {
			if _, ok := mseg[k]; !ok {
				all = append(all, k)
			}
		}
		sort.Strings(all)
		for _, id := range all {
			mm, cm := median(mseg[id]), median(cseg[id])
			p("| %s | %.1f | %.1f | %.0f | %.0f | %s |\n", regName(id), float64(len(mseg[id]))/float64(max(r.m.n, 1)),
				float64(len(cseg[id]))/float64(max(r.c.n, 1)), mm, cm, ratio(cm, mm))
		}
	}

	p("\n### Where the config accesses go (per command)\n\n")
	for _, r := range rows {
		if r.name != "PAOS" && !strings.HasPrefix(r.name, "PDDR") {
			continue
		}
		p("**%s** — mstflint: `%s`; cxray: `%s`\n\n", r.name, short(r.pair.Mst), short(r.pair.Cxray))
		p("| config access | mstflint | cxray |\n|---|--:|--:|\n")
		keys := map[string]bool{}
		for _, k := range sortedKeys(r.m.total.ByTarget) {
			keys[k] = true
		}
		for _, k := range sortedKeys(r.c.total.ByTarget) {
			keys[k] = true
		}
		for _, k := range sortedKeys(boolKeys(keys)) {
			p("| %s | %.1f | %.1f |\n", k, per(r.m.total.ByTarget[k], r.m.n), per(r.c.total.ByTarget[k], r.c.n))
		}
		p("| **total** | **%.1f** | **%.1f** |\n\n", r.m.ops, r.c.ops)
		p("| gateway work | mstflint | cxray |\n|---|--:|--:|\n")
		p("| semaphore acquisitions | %.1f | %.1f |\n", per(r.m.total.SemTaken, r.m.n), per(r.c.total.SemTaken, r.c.n))
		p("| space selections (CTRL writes) | %.1f | %.1f |\n", per(r.m.total.SpaceSelects, r.m.n), per(r.c.total.SpaceSelects, r.c.n))
		tk := map[string]bool{}
		for k := range r.m.total.Transactions {
			tk[k] = true
		}
		for k := range r.c.total.Transactions {
			tk[k] = true
		}
		for _, k := range sortedKeys(boolKeys(tk)) {
			p("| dword transactions: %s | %.1f | %.1f |\n", k, per(r.m.total.Transactions[k], r.m.n), per(r.c.total.Transactions[k], r.c.n))
		}
		ik := map[string]bool{}
		for k := range r.m.total.ICMD {
			ik[k] = true
		}
		for k := range r.c.total.ICMD {
			ik[k] = true
		}
		for _, k := range sortedKeys(boolKeys(ik)) {
			p("| ICMD commands %s | %.1f | %.1f |\n", k, per(r.m.total.ICMD[k], r.m.n), per(r.c.total.ICMD[k], r.c.n))
		}
		p("\n")
	}
	return b.String()
}

func per(v, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(v) / float64(n)
}

func boolKeys(m map[string]bool) map[string]int {
	out := map[string]int{}
	for k := range m {
		out[k] = 1
	}
	return out
}

// segments gathers, per register ID, the config accesses of every access
// but the first of each run.
func segments(runs []run) map[string][]float64 {
	out := map[string][]float64{}
	for _, r := range runs {
		for i, sg := range r.Tally.Segments {
			if i == 0 {
				continue
			}
			out[sg.Reg] = append(out[sg.Reg], float64(sg.Ops))
		}
	}
	return out
}

// regName names a register ID ("0x5031" -> "PDDR").
func regName(id string) string {
	n, err := strconv.ParseUint(id, 0, 32)
	if err != nil {
		return id
	}
	if db, err := builtin.Load(); err == nil {
		if r, ok := db.RegisterByID(uint32(n)); ok {
			return r.Name
		}
	}
	return id
}
