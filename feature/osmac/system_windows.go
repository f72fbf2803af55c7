package osmac

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"
)

// System lists this machine's network adapters with a 6-byte address
// (see system.go).
func System(ctx context.Context) (*Listing, error) {
	ads, err := adapters()
	if err != nil {
		return nil, err
	}
	overrides := registryOverrides()
	l := &Listing{Format: FormatWindows, Interfaces: []Interface{}}
	for _, a := range ads {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("osmac: %w", err)
		}
		in := Interface{Name: a.name, Description: a.description, MAC: a.mac, Status: a.status}
		if p, err := ndisPermanent(a.guid); err == nil {
			in.PermanentMAC = p
		}
		in.Override = overrides[strings.ToLower(a.guid)]
		l.Interfaces = append(l.Interfaces, in)
	}
	sort.Slice(l.Interfaces, func(i, j int) bool { return l.Interfaces[i].Name < l.Interfaces[j].Name })
	return l, nil
}

type adapter struct {
	guid, name, description, mac, status string
}

// operStatus names IF_OPER_STATUS (RFC 2863) as Linux's operstate does.
var operStatus = map[uint32]string{1: "up", 2: "down", 3: "testing", 4: "unknown", 5: "dormant", 6: "notpresent", 7: "lowerlayerdown"}

// adapters asks IP Helper for every adapter, growing the buffer as it
// says (addresses change between calls, so a few tries).
func adapters() ([]adapter, error) {
	const flags = windows.GAA_FLAG_SKIP_UNICAST | windows.GAA_FLAG_SKIP_ANYCAST |
		windows.GAA_FLAG_SKIP_MULTICAST | windows.GAA_FLAG_SKIP_DNS_SERVER
	size := uint32(16 << 10)
	for try := 0; try < 4; try++ {
		buf := make([]byte, size)
		first := (*windows.IpAdapterAddresses)(unsafe.Pointer(&buf[0]))
		err := windows.GetAdaptersAddresses(windows.AF_UNSPEC, flags, 0, first, &size)
		if errors.Is(err, windows.ERROR_BUFFER_OVERFLOW) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("osmac: GetAdaptersAddresses: %w", err)
		}
		var out []adapter
		for a := first; a != nil; a = a.Next {
			if a.PhysicalAddressLength != 6 {
				continue // loopback, tunnels
			}
			out = append(out, adapter{
				guid:        windows.BytePtrToString(a.AdapterName),
				name:        windows.UTF16PtrToString(a.FriendlyName),
				description: windows.UTF16PtrToString(a.Description),
				mac:         net.HardwareAddr(a.PhysicalAddress[:6]).String(),
				status:      operStatus[a.OperStatus],
			})
		}
		return out, nil
	}
	return nil, errors.New("osmac: GetAdaptersAddresses kept asking for a larger buffer; try again")
}

// ndisPermanent asks the adapter's NDIS driver for its burned-in address
// (OID_802_3_PERMANENT_ADDRESS through IOCTL_NDIS_QUERY_GLOBAL_STATS on
// \\.\{GUID}, which needs no privilege).
func ndisPermanent(guid string) (string, error) {
	const (
		ioctlNDISQueryGlobalStats = 0x00170002 // CTL_CODE(FILE_DEVICE_PHYSICAL_NETCARD, 0, METHOD_OUT_DIRECT, FILE_ANY_ACCESS)
		oid8023PermanentAddress   = 0x01010101
	)
	p, err := windows.UTF16PtrFromString(`\\.\` + guid)
	if err != nil {
		return "", err
	}
	h, err := windows.CreateFile(p, 0, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		return "", err
	}
	defer windows.CloseHandle(h)
	oid := uint32(oid8023PermanentAddress)
	var out [6]byte
	var n uint32
	if err := windows.DeviceIoControl(h, ioctlNDISQueryGlobalStats, (*byte)(unsafe.Pointer(&oid)), 4, &out[0], uint32(len(out)), &n, nil); err != nil {
		return "", err
	}
	if n != 6 {
		return "", fmt.Errorf("the driver answered %d bytes for the permanent address", n)
	}
	return net.HardwareAddr(out[:]).String(), nil
}

// netClass is the registry class of network adapters; each NNNN subkey is
// one adapter, named by NetCfgInstanceId (the adapter GUID), with the
// administrator's NetworkAddress override when one is set.
const netClass = `SYSTEM\CurrentControlSet\Control\Class\{4d36e972-e325-11ce-bfc1-08002be10318}`

// registryOverrides maps lower-case adapter GUIDs to their NetworkAddress
// override (normalised). Keys it cannot read are skipped: the overrides
// only explain a drift, they never decide one.
func registryOverrides() map[string]string {
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, netClass, registry.ENUMERATE_SUB_KEYS)
	if err != nil {
		return nil
	}
	defer k.Close()
	names, err := k.ReadSubKeyNames(-1)
	if err != nil {
		return nil
	}
	vals := map[string][2]string{}
	for _, n := range names {
		sk, err := registry.OpenKey(k, n, registry.QUERY_VALUE)
		if err != nil {
			continue
		}
		id, _, _ := sk.GetStringValue("NetCfgInstanceId")
		addr, _, _ := sk.GetStringValue("NetworkAddress")
		sk.Close()
		vals[n] = [2]string{id, addr}
	}
	return overridesFrom(vals)
}
