package exportercmd

import (
	"github.com/spf13/pflag"
)

// nodeExporterFlags adds node_exporter's names for the flags it shares
// with cxray-exporter, so a DaemonSet written for one reads right for the
// other (--web.listen-address, --web.config.file).
func nodeExporterFlags(f *pflag.FlagSet, o *exporterOptions) {
	f.StringVar(&o.listen, "web.listen-address", defaultExporterListen, "the same as --listen (node_exporter's name)")
	f.StringVar(&o.webConfig, "web.config.file", "", "the same as --web.config (node_exporter's name)")
}
