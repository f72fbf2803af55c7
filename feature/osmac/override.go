package osmac

import "strings"

// overridesFrom reads the registry's adapter keys (NetCfgInstanceId and
// NetworkAddress of each) into lower-case GUID -> normalised override.
// NetworkAddress is 12 hex digits without separators; anything else
// (empty, a half-typed value the driver ignores) is no override.
func overridesFrom(keys map[string][2]string) map[string]string {
	out := map[string]string{}
	for _, v := range keys {
		id, addr := strings.ToLower(strings.TrimSpace(v[0])), strings.TrimSpace(v[1])
		if id == "" || len(addr) != 12 {
			continue
		}
		if mac, ok := NormalizeMAC(addr); ok {
			out[id] = mac
		}
	}
	return out
}
