package sysfs

import (
	"fmt"
	"strings"
)

// A File is one read-only attribute file of a function directory.
type File struct {
	Name    string
	Content string
}

// resourceLines is how many lines `resource` has on a kernel built with
// SR-IOV support (the usual distribution kernel): six BARs, the expansion
// ROM and six VF BARs.
const resourceLines = 13

// Flags of a 64-bit prefetchable memory BAR as `resource` prints them
// (IORESOURCE_MEM | PREFETCH | MEM_64 | SIZEALIGN).
const bar64PrefetchFlags = 0x14220c

// bar0Base is where the emulated BAR 0 claims to live. Nothing maps it:
// tools that want memory access to a ConnectX-4+ use config space instead.
const bar0Base = 0xe0000000

// Attributes returns the attribute files of e, in the text formats the
// kernel uses (hex IDs with 0x prefix and a newline; decimal numa_node).
func Attributes(e DeviceEntry) []File {
	hex4 := func(v uint16) string { return fmt.Sprintf("0x%04x\n", v) }
	modalias := fmt.Sprintf("pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X",
		e.Vendor, e.Device, e.SubVendor, e.SubDevice, byte(e.Class>>16), byte(e.Class>>8), byte(e.Class))
	var uevent strings.Builder
	if e.Driver != "" {
		fmt.Fprintf(&uevent, "DRIVER=%s\n", e.Driver)
	}
	fmt.Fprintf(&uevent, "PCI_CLASS=%X\nPCI_ID=%04X:%04X\nPCI_SUBSYS_ID=%04X:%04X\nPCI_SLOT_NAME=%s\nMODALIAS=%s\n",
		e.Class, e.Vendor, e.Device, e.SubVendor, e.SubDevice, e.BDF, modalias)
	var res strings.Builder
	for i := 0; i < resourceLines; i++ {
		var start, end, flags uint64
		if i == 0 {
			start, end, flags = bar0Base, bar0Base+e.BAR0Size-1, bar64PrefetchFlags
		}
		fmt.Fprintf(&res, "0x%016x 0x%016x 0x%016x\n", start, end, flags)
	}
	return []File{
		{"vendor", hex4(e.Vendor)},
		{"device", hex4(e.Device)},
		{"subsystem_vendor", hex4(e.SubVendor)},
		{"subsystem_device", hex4(e.SubDevice)},
		{"class", fmt.Sprintf("0x%06x\n", e.Class&0xFFFFFF)},
		{"revision", fmt.Sprintf("0x%02x\n", e.Revision)},
		{"numa_node", fmt.Sprintf("%d\n", e.NUMANode)},
		{"irq", "0\n"},
		{"enable", "1\n"},
		{"resource", res.String()},
		{"modalias", modalias + "\n"},
		{"uevent", uevent.String()},
	}
}
