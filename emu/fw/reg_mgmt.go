package fw

import (
	"fmt"
	"time"

	"github.com/cxray/cxray/prm"
)

// MGIR: general information. Every field is RO, so a SET changes nothing
// and answers like a GET.
func (f *Firmware) mgir(c *Call) uint8 {
	s := &f.spec
	c.Put("hw_info.device_id", s.PCIDeviceID)
	c.Put("hw_info.device_hw_revision", s.HWRevision)
	c.Put("hw_info.hw_dev_id", s.HWDevID)
	c.Put("hw_info.num_ports", len(f.ports))
	c.Put("hw_info.manufacturing_base_mac", s.BaseMAC)
	up := c.Now.Sub(f.boot)
	c.Put("hw_info.uptime", uint32(max(up, 0)/time.Second))

	// The 8-bit version fields cannot hold a sub-minor above 255; they carry
	// the low bits, and the extended fields carry the whole numbers.
	run := f.flash.running // the image running now (flash.go)
	c.Put("fw_info.major", run.Version.Major&0xFF)
	c.Put("fw_info.minor", run.Version.Minor&0xFF)
	c.Put("fw_info.sub_minor", run.Version.SubMinor&0xFF)
	c.Put("fw_info.extended_major", run.Version.Major)
	c.Put("fw_info.extended_minor", run.Version.Minor)
	c.Put("fw_info.extended_sub_minor", run.Version.SubMinor)
	c.Put("fw_info.secured", s.Secure)
	c.Put("fw_info.signed_fw", s.Secure)
	c.Put("fw_info.build_id", s.FWBuildID)
	c.Put("fw_info.ini_file_version", s.INIFileVersion)
	// Dates are BCD: 2023-10-05 reads year 0x2023, month 0x10, day 0x05;
	// the hour field holds hours and minutes (17:43 is 0x1743).
	t := run.Built.UTC()
	c.Put("fw_info.year", bcd(t.Year()))
	c.Put("fw_info.month", bcd(int(t.Month())))
	c.Put("fw_info.day", bcd(t.Day()))
	c.Put("fw_info.hour", bcd(t.Hour())<<8|bcd(t.Minute()))
	c.Put("fw_info.psid", s.PSID)
	return StatusOK
}

// bcd encodes v (0..9999) as binary-coded decimal.
func bcd(v int) uint64 {
	v = min(max(v, 0), 9999)
	return uint64(v/1000%10)<<12 | uint64(v/100%10)<<8 | uint64(v/10%10)<<4 | uint64(v%10)
}

// MCAM, PCAM and QCAM: the access registers of their 128-ID groups the
// firmware answers (the management registers from 0x9000, in three
// groups; the port registers from 0x5000 and the QoS ones from 0x4000, in
// one). Their enhanced-feature masks stay zero: the emulator claims no
// feature it was not built to model.
func (f *Firmware) mcam(c *Call) uint8 {
	return f.capMask(c, "MCAM", 0x9000, 3, "mng_access_reg_cap_mask")
}

func (f *Firmware) pcam(c *Call) uint8 {
	return f.capMask(c, "PCAM", 0x5000, 1, "port_access_reg_cap_mask")
}

func (f *Firmware) qcam(c *Call) uint8 {
	return f.capMask(c, "QCAM", 0x4000, 1, "qos_access_reg_cap_mask")
}

func (f *Firmware) capMask(c *Call, name string, first, groups int, mask string) uint8 {
	group := c.Req("access_reg_group")
	if fg := c.Req("feature_group"); fg != 0 {
		return c.Fail(StatusBadParam, "%s feature_group %d is not defined (only 0, enhanced_features)", name, fg)
	}
	if group >= uint64(groups) {
		return c.Fail(StatusBadParam, "%s access_reg_group %d is not defined (0..%d: 128 register IDs each from 0x%04x)", name, group, groups-1, first)
	}
	base := first + 0x80*int(group)
	var words [4]uint32
	for n := 0; n < 128; n++ {
		if f.answers(uint16(base + n)) {
			words[3-n/32] |= 1 << (n % 32)
		}
	}
	for i, w := range words {
		c.Put(fmt.Sprintf("%s[%d]", mask, i), w)
	}
	return StatusOK
}

// component is one entry of the firmware-component list (MCQS/MCQI).
type component struct {
	identifier string // MCQS identifier enum name
	status     string // MCQS component_status enum name
	size       uint32 // bytes
	versions   bool   // has VERSION and ACTIVATION_METHOD info
}

// components is the list an adapter reports: the boot image (the running
// firmware) and the NV configuration sections, as ConnectX firmware lists them.
var components = []component{
	{identifier: "BOOT_IMG", status: "IN_USE", size: 0x01A00000, versions: true},
	{identifier: "OEM_NVCONFIG", status: "PRESENT", size: 0x10000},
	{identifier: "MLNX_NVCONFIG", status: "PRESENT", size: 0x10000},
	{identifier: "CS_TOKEN", status: "NOT_PRESENT"},
	{identifier: "DBG_TOKEN", status: "NOT_PRESENT"},
}

// componentIndex checks the component index fields of MCQS/MCQI.
func (f *Firmware) componentIndex(c *Call) (*component, int, uint8) {
	if dt, di := c.Req("device_type"), c.Req("device_index"); dt != 0 || di != 0 {
		return nil, 0, c.Fail(StatusBadParam, "device_type %d / device_index %d: only the adapter itself (0/0) has components", dt, di)
	}
	i := int(c.Req("component_index"))
	if i >= len(components) {
		return nil, 0, c.Fail(StatusBadParam, "component_index %d does not exist (components 0..%d)", i, len(components)-1)
	}
	return &components[i], i, StatusOK
}

// MCQS: component query.
func (f *Firmware) mcqs(c *Call) uint8 {
	comp, i, st := f.componentIndex(c)
	if st != StatusOK {
		return st
	}
	c.Put("last_index_flag", i == len(components)-1)
	c.Put("identifier", comp.identifier)
	state := "IDLE"
	if fl := f.flash; comp.identifier == "BOOT_IMG" {
		fl.advance(c.Now)
		switch {
		case fl.state != fsmIdle && fl.comp == i:
			state = "IN_PROGRESS"
		case fl.pending():
			state = "ACTIVE_PENDING_RESET"
		}
	}
	c.Put("component_update_state", state)
	c.Put("component_status", comp.status)
	return StatusOK
}

// MCQI: component information. The info is built whole at offset 0, then
// the window the request asks for (offset, data_size) is moved to the start
// of the data area.
func (f *Firmware) mcqi(c *Call) uint8 {
	comp, _, st := f.componentIndex(c)
	if st != StatusOK {
		return st
	}
	pending := c.Req("read_pending_component") != 0
	infoType := c.Req("info_type")
	name, _ := f.enumName("MCQI", "info_type", infoType)
	var member string
	switch name {
	case "CAPABILITIES":
		member = "mcqi_cap_ext"
		bits := uint32(0)
		if comp.versions {
			bits = 1<<1 | 1<<5 // VERSION, ACTIVATION_METHOD
		}
		p := "data." + member + "."
		c.Put(p+"supported_info_bitmask", bits)
		size, maxSize := comp.size, comp.size
		if comp.identifier == "BOOT_IMG" {
			size, maxSize = uint32(f.flash.stored.Size), uint32(f.flash.spec.MaxComponentSize)
		}
		c.Put(p+"component_size", size)
		c.Put(p+"max_component_size", maxSize)
		c.Put(p+"log_mcda_word_size", 2) // 4-byte words
		c.Put(p+"mcda_max_write_size", mcdaMaxWriteSize)
		c.Put(p+"rd_en", false) // no read-back: keeps tools from reading flash through MCDA
		c.Put(p+"match_psid", true)
		c.Put(p+"match_chip_id", true)
		if _, err := c.Plan.Resolve(p+"signed_updates_only", c.Out); err == nil { // Rev 0.59 and later
			c.Put(p+"signed_updates_only", f.spec.Secure)
		}
	case "VERSION":
		if !comp.versions {
			return c.Fail(StatusBadParam, "component %s has no VERSION info", comp.identifier)
		}
		member = "mcqi_version_ext"
		im := f.flash.running
		if pending && f.flash.pending() {
			im = f.flash.stored
		}
		v := im.Version
		str := fmt.Sprintf("%d.%d.%04d", v.Major, v.Minor, v.SubMinor)
		p := "data." + member + "."
		c.Put(p+"version_string_length", len(str))
		c.Put(p+"build_time_valid", true)
		c.Put(p+"version", uint32(v.Major&0xFF)<<24|uint32(v.Minor&0xFF)<<16|uint32(v.SubMinor))
		f.putDateTime(c, p+"build_time", im.Built)
		c.Put(p+"version_string", str)
	case "ACTIVATION_METHOD":
		if !comp.versions {
			return c.Fail(StatusBadParam, "component %s has no ACTIVATION_METHOD info", comp.identifier)
		}
		member = "mcqi_activation_method_ext"
		c.Put("data."+member+".pending_fw_reset", f.flash.pending())
	default:
		return c.Fail(StatusBadParam, "MCQI info_type %d is not supported for %s (CAPABILITIES, VERSION, ACTIVATION_METHOD are)", infoType, comp.identifier)
	}
	if err := c.Flush(); err != nil {
		return c.internal(err)
	}
	start, size, ok := memberSpan(c.Plan, "data", member)
	if !ok {
		return c.internal(fmt.Errorf("MCQI: this database has no data.%s", member))
	}
	offset := c.Req("offset")
	if offset%4 != 0 || offset > uint64(size) {
		return c.Fail(StatusBadParam, "MCQI offset %d must be dword aligned and within the %d-byte info", offset, size)
	}
	avail := uint64(size) - offset
	n := c.Req("data_size")
	if n == 0 || n > avail {
		n = avail
	}
	area := c.Out[start : start+size]
	window := append([]byte(nil), area[offset:offset+n]...)
	clear(area)
	copy(area, window)
	c.Put("info_type", infoType)
	c.Put("info_size", size)
	c.Put("offset", offset)
	c.Put("data_size", n)
	return StatusOK
}

// putDateTime writes a build time: through the date-time layout's fields when
// the database describes them (newer PRM revisions), else as the 64-bit
// number they make up: BCD hours, minutes, seconds in the first dword and
// BCD day, month, year in the second.
func (f *Firmware) putDateTime(c *Call, path string, t time.Time) {
	t = t.UTC()
	if _, err := c.Plan.Resolve(path+".year", c.Out); err == nil {
		c.Put(path+".hours", bcd(t.Hour()))
		c.Put(path+".minutes", bcd(t.Minute()))
		c.Put(path+".seconds", bcd(t.Second()))
		c.Put(path+".day", bcd(t.Day()))
		c.Put(path+".month", bcd(int(t.Month())))
		c.Put(path+".year", bcd(t.Year()))
		return
	}
	hi := bcd(t.Second())<<24 | bcd(t.Minute())<<16 | bcd(t.Hour())<<8
	lo := bcd(t.Year())<<16 | bcd(int(t.Month()))<<8 | bcd(t.Day())
	c.Put(path, hi<<32|lo)
}

// memberSpan finds a union member's byte range in the register.
func memberSpan(p *prm.Plan, union, member string) (start, size int, ok bool) {
	for _, u := range p.Root.Children {
		if u.Name != union || u.Kind != prm.KindUnion || u.Bit%8 != 0 {
			continue
		}
		for _, m := range u.Children {
			if m.Name == member && m.Width%8 == 0 {
				return u.Bit / 8, m.Width / 8, u.Bit/8+m.Width/8 <= p.Bytes
			}
		}
	}
	return 0, 0, false
}

// enumName names a value of a register field's enum.
func (f *Firmware) enumName(register, path string, v uint64) (string, bool) {
	r, err := f.db.Register(register)
	if err != nil {
		return "", false
	}
	ri := f.regs[uint16(r.ID)]
	if ri == nil {
		return "", false
	}
	t, err := ri.plan.Resolve(path, ri.plan.NewBuffer())
	if err != nil || t.Step.Field == nil {
		return "", false
	}
	return t.Step.Field.EnumName(v)
}

// MQIS: query information strings, read in chunks of the info_string size.
func (f *Firmware) mqis(c *Call) uint8 {
	it := c.Req("info_type")
	name, _ := f.enumName("MQIS", "info_type", it)
	var s string
	switch name {
	case "MODEL_NAME":
		s = f.spec.PartNumber
	case "MODEL_DESCRIPTION":
		s = f.spec.Description
	case "IMAGE_VSD":
		s = f.spec.ImageVSD
	case "DEVICE_VSD":
		s = f.spec.DeviceVSD
	case "ROM_INFO":
		s = "" // no expansion ROM in the emulated image
	default:
		return c.Fail(StatusBadParam, "MQIS info_type %d is not defined (%s)", it, f.enumNames("MQIS", "info_type"))
	}
	t, err := c.Plan.Resolve("info_string", c.Out)
	if err != nil {
		return c.internal(fmt.Errorf("MQIS: %w", err))
	}
	chunk := t.Width / 8
	off := int(c.Req("read_offset"))
	want := int(c.Req("read_length"))
	if want == 0 || want > chunk {
		want = chunk
	}
	n := min(want, max(len(s)-off, 0))
	c.Put("info_length", len(s))
	c.Put("read_length", n)
	if n > 0 {
		c.Put("info_string", s[off:off+n])
	}
	return StatusOK
}
