// Package peers holds conformance tests only: NVIDIA's unmodified mstflint
// tools run against the full firmware model (emu/fw) through nsrun. They
// live apart from package nsrun so that nsrun's own tests do not depend on
// the firmware model.
package peers
