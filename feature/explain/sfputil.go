package explain

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cxray/cxray/internal/lazyre"
)

// SONiC `sfputil show eeprom [-p PORT] [-d]`: "EthernetN: SFP EEPROM
// detected" (or "... Not detected"), then indented "Key: value" lines,
// with ChannelMonitorValues (RX1Power: -1.2dBm, TX1Bias: 6.7mA) and
// ModuleMonitorValues (Temperature, Vcc) under -d.

var (
	sfpHeadRE  = lazyre.New(`^(\S+): SFP EEPROM (?i:(is )?(not )?detected)`)
	sfpPowerRE = lazyre.New(`^\s*RX(\d+)Power:\s*(-?inf|-?[\d.]+)\s*dBm`)
)

func init() {
	register(KindSfputil, &kind{
		title:    "SONiC sfputil show eeprom",
		anchor:   func(ls []string, i int) bool { return sfpHeadRE.MatchString(trimmed(ls[i])) },
		belongs:  func(l string) bool { return indented(l) || sfpHeadRE.MatchString(trimmed(l)) },
		read:     readSfputil,
		commands: [][]string{{"sfputil"}, {"show", "interfaces", "transceiver"}},
	})
}

func readSfputil(p *Part, dbs Databases) {
	port := ""
	ports := 0
	dark := map[string][]string{}
	for _, l := range p.text {
		t := trimmed(l)
		if m := sfpHeadRE.FindStringSubmatch(t); m != nil {
			port = m[1]
			ports++
			if m[3] != "" {
				p.fact(port, "no module detected")
				p.add(Finding{Severity: SevWarning, Category: CatHardware, Device: port, What: port + ": no module EEPROM detected",
					Next: "if a module is plugged, reseat it; else nothing to do"})
			}
			continue
		}
		k, v, ok := strings.Cut(t, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "Identifier", "Vendor Name", "Vendor PN", "Vendor SN", "Temperature", "Vcc":
			p.fact(port+" "+strings.TrimSpace(k), v)
		}
		if m := sfpPowerRE.FindStringSubmatch(l); m != nil {
			f, err := strconv.ParseFloat(m[2], 64)
			if strings.Contains(m[2], "inf") || (err == nil && f <= -30) {
				dark[port] = append(dark[port], m[1])
			}
		}
	}
	p.fact("ports", strconv.Itoa(ports))
	for port, lanes := range dark {
		p.add(Finding{Severity: SevWarning, Category: CatHardware, Device: port, What: fmt.Sprintf("%s: lane(s) %s receive no light (≤ -30 dBm)", port, strings.Join(lanes, ",")),
			Next: "check the fibre and the peer's transmitter; on a breakout, unused lanes are dark by design"})
	}
}
