package kernel

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/mdlayher/netlink"

	"github.com/cxray/cxray/internal/linuxabi"
	"github.com/cxray/cxray/kernel/kerneltest"
	"github.com/cxray/cxray/optics"
	"github.com/cxray/cxray/prm"
)

// FuzzSysfsParsers feeds one attribute text to every sysfs parser: none may
// panic, and what they accept must hold together.
func FuzzSysfsParsers(f *testing.F) {
	for _, s := range []string{
		"4: ACTIVE", "5: LinkUp", "7: Phy Test", "1: CA", "400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X)",
		"100 Gb/sec (4X EDR)", "a088:c203:0045:67e2", "0x1a", "0x04010000", "18446744073709551615",
		"N/A (no PMA)", "61250", "8191875", "4096000", "-1000", "sensor64", "Module0", "asic", "",
		"1e3 Gb/sec (4X NDR)", "NaN Gb/sec (4X)", "400 Gb/sec (0X NDR)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := parseCounter(s); err == nil {
			if w, err := parseCounter(strconv.FormatUint(v, 10)); err != nil || w != v {
				t.Errorf("counter %q: %d does not read back", s, v)
			}
		}
		if id, name, err := parseIndexed(s); err == nil {
			if id < 0 || id > 255 || name != strings.TrimSpace(name) {
				t.Errorf("indexed %q: %d %q", s, id, name)
			}
		}
		if r, err := parseRate(s); err == nil {
			if r.Width <= 0 || r.Gbps < 0 || r.Gbps != r.Gbps || strings.ContainsAny(r.Speed, " ()") {
				t.Errorf("rate %q: %+v", s, r)
			}
		}
		if g, err := parseGUID(s); err == nil {
			if w, err := parseGUID(prm.FormatGUID(g)); err != nil || w != g {
				t.Errorf("GUID %q: %x does not read back", s, g)
			}
		}
		if v, err := parseHex(s, 32); err == nil && v > 0xffffffff {
			t.Errorf("hex %q: %d exceeds 32 bits", s, v)
		}
		if v, err := parseMillidegrees(s, true); err == nil {
			if raw, err := parseMillidegrees(s, false); err == nil && raw >= 0 && raw <= 65535*125 && raw%125 == 0 && (v < -32768*125 || v > 32767*125) {
				t.Errorf("temperature %q: %d outside the 16-bit signed range", s, v)
			}
		}
		if k := sensorKind(s); k != "asic" && k != "module" {
			t.Errorf("kind %q", k)
		}
		_ = checkIfname(s)
	})
}

// FuzzNetlinkReplies feeds one message body to every netlink reply
// parser: devlink info, module EEPROM and RTM_NEWLINK.
func FuzzNetlinkReplies(f *testing.F) {
	// Seeds: real-shaped replies.
	ae := netlink.NewAttributeEncoder()
	ae.String(linuxabi.DEVLINK_ATTR_BUS_NAME, "pci")
	ae.String(linuxabi.DEVLINK_ATTR_DEV_NAME, "0000:c1:00.0")
	ae.String(linuxabi.DEVLINK_ATTR_INFO_DRIVER_NAME, "mlx5_core")
	ae.Nested(linuxabi.DEVLINK_ATTR_INFO_VERSION_FIXED, func(n *netlink.AttributeEncoder) error {
		n.String(linuxabi.DEVLINK_ATTR_INFO_VERSION_NAME, "fw.psid")
		n.String(linuxabi.DEVLINK_ATTR_INFO_VERSION_VALUE, "MT_0000000838")
		return nil
	})
	devlink, _ := ae.Encode()
	f.Add(devlink)
	ae = netlink.NewAttributeEncoder()
	ae.Nested(attrEEPROMHeader, func(n *netlink.AttributeEncoder) error {
		n.String(linuxabi.ETHTOOL_A_HEADER_DEV_NAME, "ens1f0np0")
		return nil
	})
	ae.Bytes(attrEEPROMData, []byte{0x19, 0x50, 0x00, 0x07})
	eeprom, _ := ae.Encode()
	f.Add(eeprom)
	ae = netlink.NewAttributeEncoder()
	ae.String(linuxabi.IFLA_IFNAME, "ens1f0np0")
	ae.Bytes(linuxabi.IFLA_ADDRESS, []byte{2, 0x11, 0x22, 0x33, 0x44, 0x55})
	ae.Bytes(linuxabi.IFLA_PERM_ADDRESS, []byte{0xa0, 0x88, 0xc2, 0x45, 0x67, 0xe2})
	link, _ := ae.Encode()
	f.Add(append(make([]byte, linuxabi.SizeofIfInfomsg), link...))
	f.Add([]byte{})
	f.Add([]byte{4, 0, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if info, err := parseDevlinkInfo(b); err == nil {
			if info.Fixed == nil || info.Running == nil || info.Stored == nil {
				t.Error("devlink info with nil maps")
			}
			_ = info.FirmwarePending()
		}
		if data, err := parseEEPROMReply(b); err == nil && len(data) > len(b) {
			t.Errorf("EEPROM data of %d bytes from a %d-byte reply", len(data), len(b))
		}
		if l, err := parseLink(b); err == nil {
			if l.PermanentAddress != nil && isZero(l.PermanentAddress) {
				t.Error("zero permanent address kept")
			}
			_ = net.HardwareAddr(l.Address).String()
		}
	})
}

// FuzzModuleRequests gives Module (optics' page policy over this
// package's ethtool reads) modules with arbitrary lower pages and pages
// 01h and 11h: whatever the module claims, every request sent must be one
// the kernel accepts, and the number of reads stays bounded.
func FuzzModuleRequests(f *testing.F) {
	f.Add([]byte{0x19, 0x50, 0x00}, []byte{14: 0x01}, []byte{})
	f.Add([]byte{0x11, 0x07, 0x00}, []byte{}, []byte{})
	f.Add([]byte{0x03, 92: 0x68}, []byte{}, []byte{})
	f.Add([]byte{0x18, 0x50, 0x80}, []byte{14: 0x03}, []byte{})
	f.Add([]byte{0x19, 0x50, 0x00, 85: 0x02, 86: 0x50, 87: 0x11, 88: 0x88}, []byte{14: 0x02}, []byte{0x10, 0x10, 0x10})
	// p1In is upper page 01h (banks), p11In upper page 11h (active lanes).
	f.Fuzz(func(t *testing.T, lowerIn, p1In, p11In []byte) {
		k := &kerneltest.Kernel{Modules: map[string]map[kerneltest.PageKey][]byte{"ens1f0np0": {}}}
		mod := k.Modules["ens1f0np0"]
		pad := func(b []byte) []byte {
			out := make([]byte, 128)
			copy(out, b)
			return out
		}
		mod[kerneltest.PageKey{I2C: 0x50}] = pad(lowerIn)
		mod[kerneltest.PageKey{I2C: 0x50, Upper: true}] = pad(nil)
		mod[kerneltest.PageKey{I2C: 0x50, Page: 1, Upper: true}] = pad(p1In)
		for _, p := range []uint8{2, 3} {
			mod[kerneltest.PageKey{I2C: 0x50, Page: p, Upper: true}] = pad([]byte{p})
		}
		for b := uint8(0); b < 4; b++ {
			mod[kerneltest.PageKey{I2C: 0x50, Bank: b, Page: 0x11, Upper: true}] = pad(p11In)
		}
		mod[kerneltest.PageKey{I2C: 0x51}] = pad(nil)
		mod[kerneltest.PageKey{I2C: 0x51, Upper: true}] = pad(nil)
		d := &Device{opts: Options{DialGeneric: k.DialGeneric}, BDF: "0000:c1:00.0"}
		mr, err := d.Module(context.Background(), "ens1f0np0")
		for _, r := range k.Requests() {
			pr := PageRequest{I2CAddress: r.I2C, Bank: r.Bank, Page: r.Page, Offset: uint16(r.Offset), Length: uint16(r.Length)}
			if verr := pr.Validate(); verr != nil || !r.HasI2C || !r.HasPage {
				t.Fatalf("sent a request the kernel refuses: %+v: %v", r, verr)
			}
		}
		if len(k.Requests()) > 16 {
			t.Errorf("%d requests for one module", len(k.Requests()))
		}
		if err == nil && (mr.Image == nil || mr.Image.Half(optics.PageAddr{I2C: 0x50}) == nil) {
			t.Error("a reading without the lower page")
		}
		if err == nil && mr.Module == nil && mr.Error == "" {
			t.Error("neither a decode nor a reason")
		}
	})
}
