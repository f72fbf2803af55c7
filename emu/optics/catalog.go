package optics

import (
	"fmt"
	"sort"
	"strings"
)

// Memory maps a catalog module follows.
const (
	mapSFF8472 = "SFF-8472"
	mapSFF8636 = "SFF-8636"
	mapCMIS    = "CMIS"
)

// Kind is a module type of the catalog.
type Kind struct {
	Name    string
	Summary string
	// Media is the fw.ModuleSpec media ("optical" or "copper").
	Media string
	// Protocols are the Ethernet protocols the module carries (fw names).
	Protocols []string
	def       def
}

// def is everything that makes a module type: identity, memory map, and
// its operating point and thresholds in physical units.
type def struct {
	mapping   string
	id        byte  // SFF-8024 identifier
	pddrID    uint8 // PDDR cable_identifier of the same form factor
	connector byte
	revision  byte // SFF-8636 byte 1, CMIS byte 1, SFF-8472 byte 94
	vendor    string
	oui       [3]byte
	pn, rev   string
	snPrefix  string
	date      string // YYMMDD
	lanes     int
	// medium: mmf, smf or copper; tech the transmitter technology nibble.
	medium       string
	tech         byte
	wavelengthNM float64
	toleranceNM  float64
	smfM         float64 // single-mode reach in m
	om3M, om4M   float64 // multimode reach in m
	copperM      float64 // cable length
	powerClass   int     // 1..8 (SFF-8636, CMIS)
	maxPowerW    float64 // CMIS byte 201
	ddm          bool
	extCal       bool // SFF-8472 external calibration
	biasMult     int  // CMIS Tx bias multiplier (1, 2, 4)
	fwMajor      byte
	fwMinor      byte
	apps         []app
	// Operating point: supply, and each lane's bias and powers (lanes
	// spread around these by the seed).
	vcc                  float64
	biasMA, txDBm, rxDBm float64
	// Thresholds: high alarm, low alarm, high warning, low warning.
	tempTh, vccTh, biasTh, txTh, rxTh [4]float64
	// losDBm: below this received power the module raises Rx LOS.
	losDBm float64
}

// app is a CMIS application descriptor.
type app struct {
	host, media           byte
	hostLanes, mediaLanes int
	hostAssign            byte
}

// Vendor identity of every emulated module: clearly not a real vendor
// (a locally administered OUI), so no output can be mistaken for a
// genuine part.
const emuVendor = "CXRAY EMULATED"

var emuOUI = [3]byte{0x02, 0x43, 0x58}

var (
	tempTh = [4]float64{75, -5, 70, 0}
	vccTh  = [4]float64{3.63, 2.97, 3.465, 3.135}
)

func catalog() map[string]Kind {
	k := map[string]Kind{}
	add := func(name, summary, media string, protos []string, d def) {
		k[name] = Kind{Name: name, Summary: summary, Media: media, Protocols: protos, def: d}
	}
	add("qsfp28-100g-sr4", "100GBASE-SR4 QSFP28 optical module (SFF-8636), 4 lanes 850 nm, MPO", "optical",
		[]string{"CAUI-4"}, def{
			mapping: mapSFF8636, id: 0x11, pddrID: 0, connector: 0x0C, revision: 0x07,
			pn: "EMU-Q28-SR4", rev: "A0", snPrefix: "EQS", date: "230314", lanes: 4,
			medium: "mmf", tech: 0x0, wavelengthNM: 850, toleranceNM: 10, om3M: 70, om4M: 100,
			powerClass: 4, ddm: true, vcc: 3.30, biasMA: 7.0, txDBm: -0.5, rxDBm: -1.5,
			tempTh: tempTh, vccTh: vccTh,
			biasTh: [4]float64{12, 1, 11, 2}, txTh: [4]float64{5, -10.4, 3, -8.4}, rxTh: [4]float64{5.4, -12.4, 2.4, -10.4}, losDBm: -20,
		})
	add("qsfp28-100g-dac", "100G QSFP28 passive copper cable, 2 m (SFF-8636, flat memory, no diagnostics)", "copper",
		[]string{"CAUI-4", "50GAUI-2", "25GAUI-1", "40GBASE-R4", "10GBASE-R"}, def{
			mapping: mapSFF8636, id: 0x11, pddrID: 0, connector: 0x23, revision: 0x07,
			pn: "EMU-Q28-DAC2M", rev: "A1", snPrefix: "EQD", date: "220930", lanes: 4,
			medium: "copper", tech: 0xA, copperM: 2, powerClass: 1,
		})
	add("sfp28-25g-lr", "25GBASE-LR SFP28 optical module (SFF-8472, external calibration), 1310 nm, 10 km, LC", "optical",
		[]string{"25GAUI-1", "10GBASE-R"}, def{
			mapping: mapSFF8472, id: 0x03, pddrID: 2, connector: 0x07, revision: 0x08,
			pn: "EMU-S28-LR", rev: "B1", snPrefix: "ESL", date: "210705", lanes: 1,
			medium: "smf", wavelengthNM: 1310, smfM: 10000, ddm: true, extCal: true,
			vcc: 3.28, biasMA: 38, txDBm: -1.0, rxDBm: -5.5,
			tempTh: [4]float64{80, -10, 75, -5}, vccTh: [4]float64{3.6, 3.0, 3.5, 3.1},
			biasTh: [4]float64{80, 10, 70, 15}, txTh: [4]float64{3, -9, 2, -8}, rxTh: [4]float64{3, -16, 2, -14.4}, losDBm: -25,
		})
	dr4 := def{
		mapping: mapCMIS, connector: 0x0C, revision: 0x50, snPrefix: "EQ1", date: "240117", lanes: 4,
		medium: "smf", tech: 0x6, wavelengthNM: 1311, toleranceNM: 6.5, smfM: 500,
		ddm: true, biasMult: 1, fwMajor: 2, fwMinor: 7,
		apps: []app{{host: 0x4F, media: 0x1C, hostLanes: 4, mediaLanes: 4, hostAssign: 0x01},
			{host: 0x4B, media: 0x14, hostLanes: 1, mediaLanes: 1, hostAssign: 0x0F}},
		vcc: 3.30, biasMA: 55, txDBm: 1.5, rxDBm: -0.5,
		tempTh: tempTh, vccTh: vccTh,
		biasTh: [4]float64{110, 20, 100, 25}, txTh: [4]float64{6, -6.4, 4, -4.4}, rxTh: [4]float64{6, -10.4, 4, -8.4}, losDBm: -20,
	}
	sr4 := def{
		mapping: mapCMIS, connector: 0x0C, revision: 0x50, snPrefix: "EQ2", date: "240205", lanes: 4,
		medium: "mmf", tech: 0x0, wavelengthNM: 850, toleranceNM: 10, om3M: 70, om4M: 100,
		ddm: true, biasMult: 1, fwMajor: 3, fwMinor: 1,
		apps: []app{{host: 0x4F, media: 0x11, hostLanes: 4, mediaLanes: 4, hostAssign: 0x01}},
		vcc:  3.31, biasMA: 8, txDBm: 0, rxDBm: -1,
		tempTh: tempTh, vccTh: vccTh,
		biasTh: [4]float64{15, 2, 13, 3}, txTh: [4]float64{5, -8.4, 3, -6.4}, rxTh: [4]float64{5, -10.4, 3, -8.4}, losDBm: -18,
	}
	q112dr4 := dr4
	q112dr4.id, q112dr4.pddrID, q112dr4.pn, q112dr4.rev, q112dr4.powerClass, q112dr4.maxPowerW = 0x1E, 7, "EMU-Q112-DR4", "A2", 7, 8.5
	add("qsfp112-400g-dr4", "400GBASE-DR4 QSFP112 optical module (CMIS 5.0), 4 lanes 1311 nm, 500 m, MPO", "optical",
		[]string{"400GAUI-4", "100GAUI-1"}, q112dr4)
	q112sr4 := sr4
	q112sr4.id, q112sr4.pddrID, q112sr4.pn, q112sr4.rev, q112sr4.powerClass, q112sr4.maxPowerW = 0x1E, 7, "EMU-Q112-SR4", "A1", 6, 7.0
	add("qsfp112-400g-sr4", "400GBASE-SR4 QSFP112 optical module (CMIS 5.0), 4 lanes 850 nm, MPO", "optical",
		[]string{"400GAUI-4"}, q112sr4)
	osfpdr4 := dr4
	osfpdr4.id, osfpdr4.pddrID, osfpdr4.pn, osfpdr4.rev, osfpdr4.powerClass, osfpdr4.maxPowerW = 0x19, 8, "EMU-OSFP-DR4", "A0", 8, 9.5
	osfpdr4.snPrefix, osfpdr4.biasMult, osfpdr4.biasMA = "EO1", 2, 75
	osfpdr4.biasTh = [4]float64{130, 20, 120, 30} // PDDR counts 2 µA in 16 bits: at most 131 mA
	add("osfp-400g-dr4", "400GBASE-DR4 OSFP optical module (CMIS 5.0, Tx bias multiplier x2), 4 lanes 1311 nm, 500 m", "optical",
		[]string{"400GAUI-4", "100GAUI-1"}, osfpdr4)
	osfpsr4 := sr4
	osfpsr4.id, osfpsr4.pddrID, osfpsr4.pn, osfpsr4.rev, osfpsr4.powerClass, osfpsr4.maxPowerW = 0x19, 8, "EMU-OSFP-SR4", "A0", 7, 8.0
	osfpsr4.snPrefix = "EO2"
	add("osfp-400g-sr4", "400GBASE-SR4 OSFP optical module (CMIS 5.0), 4 lanes 850 nm", "optical",
		[]string{"400GAUI-4"}, osfpsr4)
	add(Empty, "no module: an empty cage", "", nil, def{})
	for n, kd := range k {
		if n != Empty {
			kd.def.vendor, kd.def.oui = emuVendor, emuOUI
			k[n] = kd
		}
	}
	return k
}

// Empty is the catalog name of an empty cage.
const Empty = "empty"

// Kinds lists the catalog names, sorted.
func Kinds() []string {
	var names []string
	for n := range catalog() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LookupKind returns a catalog entry by name.
func LookupKind(name string) (Kind, error) {
	k, ok := catalog()[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return Kind{}, fmt.Errorf("unknown module type %q; the catalog has %s", name, strings.Join(Kinds(), ", "))
	}
	return k, nil
}

// DefaultKind is the module a cage gets when a scenario names only its
// media.
func DefaultKind(media string) string {
	if media == "copper" {
		return "qsfp28-100g-dac"
	}
	return "qsfp112-400g-dr4"
}
