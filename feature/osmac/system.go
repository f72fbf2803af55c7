package osmac

// System lists this machine's Ethernet interfaces as the operating system
// sees them: each one's current MAC, and its permanent (burned-in) MAC
// where the system tells it, in the Listing that Parse gives for a listing
// brought from elsewhere, so the MAC drift check runs the same on both.
//
//   - Linux (system_linux.go): /sys/class/net (address, operstate,
//     driver) and rtnetlink's IFLA_PERM_ADDRESS (kernel.LinkByName).
//   - Windows (system_windows.go): IP Helper's GetAdaptersAddresses, and
//     the permanent address from the adapter's NDIS driver
//     (OID_802_3_PERMANENT_ADDRESS); where that cannot be asked, a
//     NetworkAddress override in the adapter's registry key still shows
//     that the current MAC is not the burned-in one (Interface.Override).
//   - elsewhere (system_others.go): an error matching errors.ErrUnsupported.
//
// Interfaces without a 6-byte address (loopback, tunnels) are left out.

// Formats of System's listings.
const (
	FormatLinux   = "system (sysfs, rtnetlink)"
	FormatWindows = "system (GetAdaptersAddresses)"
)
