package explain

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cxray/cxray/internal/lazyre"
)

// Decoded `ethtool -m DEV` text: "\tLabel : value" lines as ethtool's
// sfpid.c, sfpdiag.c, qsfp.c and cmis.c print them (Identifier, Vendor
// name/PN/SN, Module temperature, voltage, per-channel bias and powers,
// alarm and warning flags "On"/"Off", thresholds).

var (
	ethIdentRE = lazyre.New(`^\s*Identifier\s*:\s*0x[0-9a-fA-F]{2}`)
	ethKVRE    = lazyre.New(`^\s*([A-Za-z][^:]*?)\s*:\s*(.*)$`)
	numRE      = lazyre.New(`-?[0-9]+(?:\.[0-9]+)?|-inf`)
)

func init() {
	register(KindEthtoolModule, &kind{
		title:    "ethtool -m (decoded module EEPROM)",
		anchor:   func(ls []string, i int) bool { return ethIdentRE.MatchString(ls[i]) },
		belongs:  func(l string) bool { return ethKVRE.MatchString(l) || indented(l) },
		read:     readEthtoolModule,
		commands: nil, // ethtool -m's command line names the hex form too: found by its anchor
	})
}

func readEthtoolModule(p *Part, dbs Databases) {
	kv := map[string]string{}
	var order []string
	for _, l := range p.text {
		m := ethKVRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		k := strings.ToLower(strings.Join(strings.Fields(m[1]), " "))
		if _, dup := kv[k]; !dup {
			order = append(order, k)
		}
		kv[k] = strings.TrimSpace(m[2])
	}
	for _, k := range []string{"identifier", "vendor name", "vendor pn", "vendor sn", "vendor rev", "transceiver type", "module temperature", "module voltage"} {
		p.fact(k, kv[k])
	}
	if kv["vendor name"] == "" && kv["vendor pn"] == "" {
		p.Partial = true
		p.inputFinding("the paste has no vendor name or part number: cut short or a fragment", "paste the whole ethtool -m DEV output")
	}
	// All-ones monitors: temperature -1/256 °C ("-0.00") and 6.5535 V.
	temp, volt := kv["module temperature"], kv["module voltage"]
	if strings.HasPrefix(temp, "-0.00") && strings.HasPrefix(volt, "6.553") {
		p.add(Finding{Severity: SevProblem, Category: CatHardware,
			What:     "the module's I2C bus is stuck: the monitors read 0xFFFF (temperature -0.00 °C, voltage 6.5535 V)",
			Evidence: []string{"Module temperature: " + temp, "Module voltage: " + volt},
			Next:     "reseat the module; if reads stay all ones, move it to another cage to tell a bad module from a bad cage, and replace the one that fails"})
		return
	}
	noLight := 0
	for _, k := range order {
		v := kv[k]
		switch {
		case (strings.Contains(k, "alarm") || strings.Contains(k, "warning")) && !strings.Contains(k, "threshold") && strings.EqualFold(v, "on"):
			sev := SevProblem
			if strings.Contains(k, "warning") {
				sev = SevWarning
			}
			p.add(Finding{Severity: sev, Category: CatHardware, What: "the module raises " + k,
				Next: flagNext(k)})
		case (strings.Contains(k, "loss of signal") || strings.Contains(k, "loss of lock") || strings.HasSuffix(k, "fault")) && strings.Contains(strings.ToLower(v), "yes"):
			p.add(Finding{Severity: SevWarning, Category: CatHardware, What: fmt.Sprintf("the module reports %s: %s", k, v),
				Next: flagNext(k)})
		case (strings.Contains(k, "rcvr signal") || strings.Contains(k, "receiver signal") || strings.Contains(k, "rx power")) && !strings.Contains(k, "threshold"):
			if dbm := dBm(v); dbm <= -30 {
				noLight++
			}
		}
	}
	if noLight > 0 {
		p.add(Finding{Severity: SevWarning, Category: CatHardware, What: fmt.Sprintf("%d receive channel(s) see no light (≤ -30 dBm)", noLight),
			Next: "check the fibre (clean, seated, not crossed) and that the peer's transmitter is on; on a breakout, unused lanes are dark by design"})
	}
}

func flagNext(k string) string {
	switch {
	case strings.Contains(k, "temperature"):
		return "check airflow; a module hotter than its threshold shuts down"
	case strings.Contains(k, "rcvr") || strings.Contains(k, "rx"):
		return "the received light is out of range: clean or replace the fibre, check the peer's module"
	case strings.Contains(k, "bias") || strings.Contains(k, "output power") || strings.Contains(k, "tx"):
		return "the module's transmitter is failing: replace the module"
	case strings.Contains(k, "voltage"):
		return "the cage's supply voltage is out of range: try another cage; if it follows the module, replace it"
	}
	return "reseat the module; replace it if the flag stays"
}

// dBm reads "0.5000 mW / -3.01 dBm" (or "-inf dBm", "0.0000 mW").
func dBm(v string) float64 {
	if i := strings.Index(v, "/"); i >= 0 {
		v = v[i+1:]
	}
	if strings.Contains(v, "-inf") {
		return -100
	}
	m := numRE.FindString(v)
	f, err := strconv.ParseFloat(m, 64)
	if err != nil {
		return 0
	}
	if !strings.Contains(v, "dBm") && strings.Contains(v, "mW") {
		if f <= 0 {
			return -100
		}
	}
	return f
}
