package explain

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cxray/cxray/internal/lazyre"
)

// `lspci -vv` (pciutils ls-caps.c): a device line "03:00.0 Ethernet
// controller: ...", then indented lines; the PCI Express capability's
// LnkCap/LnkSta ("Speed 16GT/s, Width x16", "(downgraded)"), DevSta
// ("CorrErr+ NonFatalErr- ..."), and AER's UESta/CESta bits.

var (
	lspciDevRE = lazyre.New(`^(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7] [^:]+: `)
	lnkRE      = lazyre.New(`Lnk(Cap|Sta):\s.*?Speed ([\d.]+)GT/s[^,]*, Width x(\d+)`)
	plusFlagRE = lazyre.New(`(\w+)\+`)
	lspciStaRE = lazyre.New(`^\s*(DevSta|UESta|CESta):\s*(.*)$`)
)

func init() {
	register(KindLspci, &kind{
		title:    "lspci -vv",
		anchor:   func(ls []string, i int) bool { return lspciDevRE.MatchString(trimmed(ls[i])) && !isKernelLine(ls[i]) },
		belongs:  func(l string) bool { return indented(l) || lspciDevRE.MatchString(trimmed(l)) },
		read:     readLspci,
		commands: [][]string{{"lspci"}},
	})
}

type pciDev struct {
	name                 string
	capSpeed, staSpeed   float64
	capWidth, staWidth   int
	devSta, ueSta, ceSta []string
	denied, mellanox     bool
}

func readLspci(p *Part, dbs Databases) {
	var devs []*pciDev
	var cur *pciDev
	for _, l := range p.text {
		t := trimmed(l)
		if lspciDevRE.MatchString(t) {
			cur = &pciDev{name: t}
			low := strings.ToLower(t)
			// Only ConnectX and BlueField functions are judged: GPUs and
			// other devices train down to save power when idle.
			cur.mellanox = strings.Contains(low, "mellanox") || strings.Contains(low, "connectx") || strings.Contains(low, "bluefield") || strings.Contains(low, "[15b3:")
			devs = append(devs, cur)
			continue
		}
		if cur == nil {
			continue
		}
		if strings.Contains(t, "<access denied>") {
			cur.denied = true
		}
		if m := lnkRE.FindStringSubmatch(t); m != nil {
			s, _ := strconv.ParseFloat(m[2], 64)
			w, _ := strconv.Atoi(m[3])
			if m[1] == "Cap" {
				cur.capSpeed, cur.capWidth = s, w
			} else {
				cur.staSpeed, cur.staWidth = s, w
			}
		}
		if m := lspciStaRE.FindStringSubmatch(l); m != nil {
			var set []string
			for _, f := range plusFlagRE.FindAllStringSubmatch(m[2], -1) {
				set = append(set, f[1])
			}
			switch m[1] {
			case "DevSta":
				cur.devSta = set
			case "UESta":
				cur.ueSta = set
			case "CESta":
				cur.ceSta = set
			}
		}
	}
	if len(devs) == 0 {
		p.Error = "no device line (BB:DD.F class: name)"
		return
	}
	p.fact("devices", strconv.Itoa(len(devs)))
	for _, d := range devs {
		id := strings.Fields(d.name)[0]
		if d.capWidth > 0 || d.staWidth > 0 {
			p.fact(id+" link", fmt.Sprintf("%gGT/s x%d (capable of %gGT/s x%d)", d.staSpeed, d.staWidth, d.capSpeed, d.capWidth))
		} else {
			p.fact(id, d.name[len(id):])
		}
		if !d.mellanox {
			continue
		}
		if d.denied {
			p.Partial = true
			p.inputFinding(id+": the capabilities read '<access denied>': lspci was not run as root, so the link and error status are not shown", "run sudo lspci -vv -s "+id)
		}
		if d.staWidth > 0 && (d.staSpeed < d.capSpeed || d.staWidth < d.capWidth) {
			p.add(Finding{Severity: SevWarning, Category: CatHardware, Device: id,
				What: fmt.Sprintf("%s trained at %gGT/s x%d, below what it can do (%gGT/s x%d)", id, d.staSpeed, d.staWidth, d.capSpeed, d.capWidth),
				Next: "compare with the upstream port (lspci -vv -s the bridge): if the slot is narrower or slower, that is its limit; else reseat the adapter, check the riser, or try another slot"})
		}
		for _, f := range d.devSta {
			sev, what := SevWarning, "reports a correctable error (DevSta CorrErr+)"
			switch f {
			case "CorrErr":
			case "NonFatalErr", "FatalErr":
				sev, what = SevProblem, "reports an uncorrectable error (DevSta "+f+"+)"
			case "UnsupReq":
				sev, what = SevInfo, "logged an unsupported request (DevSta UnsupReq+; often from a config-space probe, harmless alone)"
			default:
				continue
			}
			p.add(Finding{Severity: sev, Category: CatHardware, Device: id, What: id + " " + what,
				Next: "the AER status bits (UESta/CESta) name the error; a steady stream means reseat, riser or slot"})
		}
		if len(d.ueSta) > 0 {
			p.add(Finding{Severity: SevProblem, Category: CatHardware, Device: id, What: id + ": uncorrectable PCIe errors logged: " + strings.Join(d.ueSta, " "),
				Next: "check the slot and riser; update BIOS and adapter firmware; the kernel log's AER lines say when"})
		}
		if len(d.ceSta) > 0 {
			p.add(Finding{Severity: SevWarning, Category: CatHardware, Device: id, What: id + ": correctable PCIe errors logged: " + strings.Join(d.ceSta, " "),
				Next: "a few are harmless; if they keep coming (aer_dev_correctable in sysfs), reseat the adapter or try another slot"})
		}
	}
}
