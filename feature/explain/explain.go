// Package explain reads what engineers have in front of them — kernel log
// lines, pasted tool outputs, dumps, cxray's own files — says what each
// piece is, decodes it with the code the live commands use, and gives
// verdicts with a category and a next step.
//
// A text is split into parts (split.go): shell prompts and code fences
// start a new piece, and inside a piece each kind's anchor line starts a
// part that runs while its lines belong to it, so a whole dmesg, a support
// bundle or a ticket with several pastes is explained part by part. One
// file per kind reads it (kmsg.go, ethtoolm.go, mlxlink.go, lspci.go, ...),
// node_exporter style; fixtures per kind are in testdata/.
package explain

import (
	"fmt"
	"strings"

	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/nvconf/querytext"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/cmdb"
)

// Categories: who has to act on a finding.
const (
	CatSoftware = "software use"  // the application, the driver's user, a setting the user made
	CatConfig   = "configuration" // NV or OS configuration
	CatFirmware = "firmware"
	CatHardware = "hardware" // module, cable, slot, adapter
	CatInput    = "input"    // what was given cannot support a verdict
)

// Severities of findings.
const (
	SevProblem = "problem"
	SevWarning = "warning"
	SevInfo    = "info"
)

// Kinds of input.
const (
	KindKernelLog      = "kernel-log"
	KindEthtoolModule  = "ethtool-m"
	KindModuleDump     = "module-dump"
	KindRegisterDump   = "register-dump"
	KindMlxlink        = "mlxlink"
	KindLspci          = "lspci"
	KindSfputil        = "sfputil"
	KindDevlinkHealth  = "devlink-health"
	KindRdmaQP         = "rdma-qp"
	KindMlxconfig      = "mlxconfig-query"
	KindNVBackup       = "nv-backup"
	KindFirmwareQuery  = "firmware-query"
	KindOSListing      = "os-listing"
	KindCxraySnapshot  = "cxray-snapshot"
	KindCxrayMonitor   = "cxray-monitor"
	KindUnrecognised   = "unrecognised"
	maxParts           = 1000
	maxFindingsPerPart = 200
)

// Finding is one thing found, who acts, and what to do next.
type Finding struct {
	Severity string   `json:"severity"`
	Category string   `json:"category"`
	What     string   `json:"what"`
	Next     string   `json:"next,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
	Line     int      `json:"line,omitempty"`
	Count    int      `json:"count,omitempty"` // the same finding this many times (>1)
	Device   string   `json:"device,omitempty"`
}

// Fact is one decoded value of a part, in reading order.
type Fact struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Part is one piece of the input and what it says.
type Part struct {
	Kind  string `json:"kind"`
	Title string `json:"title"`
	// From and To are the part's first and last lines in the input (from 1).
	From int `json:"from_line"`
	To   int `json:"to_line"`
	// Command is the command line pasted above the part, if any.
	Command string `json:"command,omitempty"`
	// Partial says the part is incomplete (cut short, a fragment): its
	// findings are about the input, never the hardware.
	Partial bool `json:"partial,omitempty"`
	// Error says why the part could not be read (a finding of category
	// input says it too).
	Error    string    `json:"error,omitempty"`
	Facts    []Fact    `json:"decoded"`
	Events   []Event   `json:"events,omitempty"`
	Findings []Finding `json:"findings"`
	Notes    []string  `json:"notes,omitempty"`
	// Data is the kind's full decode, for -o json (the module report, the
	// settings of a query, ...).
	Data any `json:"data,omitempty"`

	text []string
}

func (p *Part) fact(name, value string) {
	if value != "" {
		p.Facts = append(p.Facts, Fact{name, value})
	}
}

func (p *Part) add(f Finding) {
	for i := range p.Findings {
		g := &p.Findings[i]
		if g.What == f.What && g.Category == f.Category && g.Device == f.Device && g.Severity == f.Severity {
			g.Count = max(g.Count, 1) + 1
			return
		}
	}
	if len(p.Findings) >= maxFindingsPerPart {
		return
	}
	p.Findings = append(p.Findings, f)
}

// inputFinding records that the part cannot be judged.
func (p *Part) inputFinding(what, next string) {
	p.add(Finding{Severity: SevProblem, Category: CatInput, What: what, Next: next})
}

// Report is what a text held.
type Report struct {
	Parts []*Part `json:"parts"`
	// Unrecognised counts the non-blank lines no part took (prose, other
	// logs' lines are in their kernel-log part).
	Unrecognised int `json:"unrecognised_lines"`
}

// Document is `cxray explain -o json`: the report of the text read from
// Input (a file name, or "-"). Its fields are in key order, as the map it
// replaced was written (docs/explain.md sketches it).
type Document struct {
	Input             string  `json:"input"`
	Parts             []*Part `json:"parts"`
	Problem           bool    `json:"problem"`
	UnrecognisedLines int     `json:"unrecognised_lines"`
}

// Document is r as `explain -o json` writes it for input.
func (r *Report) Document(input string) Document {
	return Document{Input: input, Parts: r.Parts, Problem: r.Problem(), UnrecognisedLines: r.Unrecognised}
}

// Problem says a finding of severity problem or warning was made.
func (r *Report) Problem() bool {
	for _, p := range r.Parts {
		for _, f := range p.Findings {
			if f.Severity != SevInfo {
				return true
			}
		}
	}
	return false
}

// Unreadable says nothing in the input could be read: no part, or every
// part failed to read. (exit 2)
func (r *Report) Unreadable() bool {
	for _, p := range r.Parts {
		if p.Error == "" {
			return false
		}
	}
	return true
}

// Databases are what the readers decode with: the register database, the
// command database, the NV parameter database. Any may be nil; the readers
// then decode less and say so.
type Databases struct {
	Registers *prm.DB
	Commands  *cmdb.DB
	NV        *nvconf.DB
}

// MaxText bounds an input.
const MaxText = 64 << 20

// Explain splits text into parts and explains each.
func Explain(text string, dbs Databases) (*Report, error) {
	if len(text) > MaxText {
		return nil, fmt.Errorf("%d bytes; explain reads at most %d", len(text), MaxText)
	}
	lines := splitLines(text)
	r := &Report{Parts: []*Part{}}
	parts, unrec := Split(lines)
	r.Unrecognised = unrec
	for _, p := range parts {
		read(p, dbs)
		if p.Partial && p.Error == "" {
			keepInputOnly(p)
		}
		r.Parts = append(r.Parts, p)
	}
	return r, nil
}

// keepInputOnly turns the verdicts on a partial part into input findings:
// what cannot be seen whole never gets a verdict on the hardware.
func keepInputOnly(p *Part) {
	var keep []Finding
	for _, f := range p.Findings {
		if f.Category == CatHardware || f.Category == CatFirmware {
			f.Category = CatInput
			f.What = "from a partial input, not judged: " + f.What
			f.Next = "give the whole output to judge it"
		}
		keep = append(keep, f)
	}
	p.Findings = keep
}

// read dispatches to the kind's reader.
func read(p *Part, dbs Databases) {
	if p.Findings == nil {
		p.Findings = []Finding{}
	}
	if p.Facts == nil {
		p.Facts = []Fact{}
	}
	k := kinds[p.Kind]
	if k == nil || k.read == nil {
		return
	}
	if p.Title == "" {
		p.Title = k.title
	}
	k.read(p, dbs)
	if p.Error != "" && !hasCategory(p, CatInput) {
		p.inputFinding("could not read it as "+k.title+": "+p.Error, "check the paste is whole and is what it seems; cxray explain names the line it stopped at")
	}
}

func hasCategory(p *Part, c string) bool {
	for _, f := range p.Findings {
		if f.Category == c {
			return true
		}
	}
	return false
}

// splitLines normalises what terminals and editors add — CRLF, a BOM,
// colour codes — and splits into lines.
func splitLines(text string) []string {
	text = strings.TrimPrefix(text, "\ufeff")
	text = querytext.StripANSI(text)
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	return strings.Split(text, "\n")
}

func joinLines(ls []string) string { return strings.Join(ls, "\n") + "\n" }
