package scenario

import "gopkg.in/yaml.v3"

// The shape of a scenario file, as yaml.v3 struct tags: which keys exist,
// which hold a mapping and which a list (with its longest length in max).
// Parse checks a file against these types first (shape, in yamlx.go: every
// problem with line, column and a suggestion), then yaml.v3 decodes it
// with KnownFields(true), and the readers in this package turn the values
// into a Scenario. A yaml.Node field is a value its reader checks (Kind 0 when the key is absent): a
// number, a name, a count-or-list, or a free mapping of names to values.
//
// doc.go shows every key with an example (testdata/reference.yaml, kept
// equal by TestReferenceMatchesDoc); TestSchemaMatchesReference checks that
// the reference uses every key declared here.

type fileScenario struct {
	Seed    yaml.Node     `yaml:"seed"`
	Clock   *fileClock    `yaml:"clock"`
	PRM     yaml.Node     `yaml:"prm"`
	Devices []*fileDevice `yaml:"devices" max:"16"` // MaxDevices
}

type fileClock struct {
	Start yaml.Node `yaml:"start"`
	Mode  yaml.Node `yaml:"mode"`
}

type fileDevice struct {
	Name            yaml.Node     `yaml:"name"`
	Profile         yaml.Node     `yaml:"profile"`
	Seed            yaml.Node     `yaml:"seed"`
	BDF             yaml.Node     `yaml:"bdf"`
	Functions       yaml.Node     `yaml:"functions"` // a count or a list of fileFunction
	Firmware        *fileFirmware `yaml:"firmware"`
	SerialNumber    yaml.Node     `yaml:"serial_number"`
	PartNumber      yaml.Node     `yaml:"part_number"`
	Description     yaml.Node     `yaml:"description"`
	ImageVSD        yaml.Node     `yaml:"image_vsd"`
	DeviceVSD       yaml.Node     `yaml:"device_vsd"`
	BaseMAC         yaml.Node     `yaml:"base_mac"`
	BaseGUID        yaml.Node     `yaml:"base_guid"`
	Ports           []*filePort   `yaml:"ports" max:"16"`   // fw.MaxPorts
	Modules         []*fileModule `yaml:"modules" max:"16"` // fw.MaxModules
	ASICTemperature *fileThermal  `yaml:"asic_temperature"`
	RoCE            *fileRoCE     `yaml:"roce"`
	Faults          *fileFaults   `yaml:"faults"`
	NV              *fileNV       `yaml:"nv"`
	RDMA            *fileRDMA     `yaml:"rdma"`
	NVMF            *fileNVMF     `yaml:"nvmf"`
	Lockdown        yaml.Node     `yaml:"lockdown"`
	NUMANode        yaml.Node     `yaml:"numa_node"`
	PCIe            *filePCIe     `yaml:"pcie"`
}

type fileFunction struct {
	BDF    yaml.Node `yaml:"bdf"`
	Port   yaml.Node `yaml:"port"`
	Netdev yaml.Node `yaml:"netdev"`
	RDMA   yaml.Node `yaml:"rdma"`
	MAC    yaml.Node `yaml:"mac"`
}

type fileFirmware struct {
	Version        yaml.Node `yaml:"version"`
	PendingVersion yaml.Node `yaml:"pending_version"`
	BuildTime      yaml.Node `yaml:"build_time"`
	BuildID        yaml.Node `yaml:"build_id"`
	PSID           yaml.Node `yaml:"psid"`
	Secure         yaml.Node `yaml:"secure"`
}

type filePort struct {
	Port      yaml.Node    `yaml:"port"`
	Admin     yaml.Node    `yaml:"admin"`
	Lanes     yaml.Node    `yaml:"lanes"`
	Protocols []yaml.Node  `yaml:"protocols" max:"32"`
	Traffic   *fileTraffic `yaml:"traffic"`
	Link      *fileLink    `yaml:"link"`
	IB        *fileIB      `yaml:"ib"`
	RDMA      *fileRDMA    `yaml:"rdma"`
}

type fileTraffic struct {
	TxFramesPerSec         yaml.Node   `yaml:"tx_frames_per_sec"`
	RxFramesPerSec         yaml.Node   `yaml:"rx_frames_per_sec"`
	FrameBytes             yaml.Node   `yaml:"frame_bytes"`
	MulticastShare         yaml.Node   `yaml:"multicast_share"`
	BroadcastShare         yaml.Node   `yaml:"broadcast_share"`
	RxErrorsPerSec         yaml.Node   `yaml:"rx_errors_per_sec"`
	RxDiscardsPerSec       yaml.Node   `yaml:"rx_discards_per_sec"`
	SymbolErrorsPerSec     yaml.Node   `yaml:"symbol_errors_per_sec"`
	FECCorrectedPerSec     yaml.Node   `yaml:"fec_corrected_per_sec"`
	FECUncorrectablePerSec yaml.Node   `yaml:"fec_uncorrectable_per_sec"`
	PriorityShare          []yaml.Node `yaml:"priority_share" max:"8"`
}

type fileLink struct {
	RawBER           yaml.Node   `yaml:"raw_ber"`
	EffectiveBER     yaml.Node   `yaml:"effective_ber"`
	LaneBER          []yaml.Node `yaml:"lane_ber" max:"8"`
	PartnerProtocols []yaml.Node `yaml:"partner_protocols" max:"32"`
	PartnerFEC       yaml.Node   `yaml:"partner_fec"`
}

type fileIB struct {
	Speeds                []yaml.Node `yaml:"speeds" max:"16"`
	PartnerSpeeds         []yaml.Node `yaml:"partner_speeds" max:"16"`
	Width                 yaml.Node   `yaml:"width"`
	State                 yaml.Node   `yaml:"state"`
	LID                   yaml.Node   `yaml:"lid"`
	SMLID                 yaml.Node   `yaml:"sm_lid"`
	LinkRecoveriesPerHour yaml.Node   `yaml:"link_recoveries_per_hour"`
}

type fileRDMA struct {
	Loss      yaml.Node `yaml:"loss"`
	RTT       yaml.Node `yaml:"rtt"`
	LogWindow yaml.Node `yaml:"log_window"`
	Share     yaml.Node `yaml:"share"`
	Priority  yaml.Node `yaml:"priority"`
}

type fileThermal struct {
	Idle   yaml.Node `yaml:"idle"`
	Load   yaml.Node `yaml:"load"`
	Wander yaml.Node `yaml:"wander"`
	High   yaml.Node `yaml:"high"`
	Low    yaml.Node `yaml:"low"`
	Warmup yaml.Node `yaml:"warmup"`
	Period yaml.Node `yaml:"period"`
}

type fileModule struct {
	Module      yaml.Node    `yaml:"module"`
	Plugged     yaml.Node    `yaml:"plugged"`
	Media       yaml.Node    `yaml:"media"`
	Type        yaml.Node    `yaml:"type"`
	Faults      []yaml.Node  `yaml:"faults" max:"16"`
	Error       yaml.Node    `yaml:"error"`
	Protocols   []yaml.Node  `yaml:"protocols" max:"32"`
	Temperature *fileThermal `yaml:"temperature"`
}

type fileRoCE struct {
	Supported []yaml.Node `yaml:"supported" max:"32"`
	Enabled   []yaml.Node `yaml:"enabled" max:"32"`
}

type fileNV struct {
	Factory       yaml.Node   `yaml:"factory"`    // name: value
	Configured    yaml.Node   `yaml:"configured"` // name: value
	Pending       yaml.Node   `yaml:"pending"`    // name: value
	Unsupported   []yaml.Node `yaml:"unsupported" max:"1024"`
	NoAccess      yaml.Node   `yaml:"no_access"`
	EraseExceeded yaml.Node   `yaml:"erase_exceeded"`
	EraseBudget   yaml.Node   `yaml:"erase_budget"`
	RejectWrites  []yaml.Node `yaml:"reject_writes" max:"1024"`
}

type fileFaults struct {
	// Device level (emu.Faults).
	GatewaySemaphoreHeld yaml.Node `yaml:"gateway_semaphore_held"`
	ICMDSemaphoreHeld    yaml.Node `yaml:"icmd_semaphore_held"`
	ICMDStuckBusy        yaml.Node `yaml:"icmd_stuck_busy"`
	SlowICMDPolls        yaml.Node `yaml:"slow_icmd_polls"`
	SlowICMD             yaml.Node `yaml:"slow_icmd"`
	Removed              yaml.Node `yaml:"removed"`
	RegisterStatus       yaml.Node `yaml:"register_status"` // register: status
	// Firmware level (fw.Faults).
	Unsupported           []yaml.Node        `yaml:"unsupported" max:"256"`
	Status                []*fileStatusFault `yaml:"status" max:"256"`
	Busy                  yaml.Node          `yaml:"busy"`
	FreezeTemperatures    yaml.Node          `yaml:"freeze_temperatures"`
	ASICTemperatureOffset yaml.Node          `yaml:"asic_temperature_offset"`
	LinkDown              []yaml.Node        `yaml:"link_down" max:"16"` // fw.MaxPorts
}

type fileStatusFault struct {
	Register yaml.Node `yaml:"register"`
	Status   yaml.Node `yaml:"status"`
	Method   yaml.Node `yaml:"method"`
}

type fileNVMF struct {
	Offload yaml.Node  `yaml:"offload"`
	XRQs    []*fileXRQ `yaml:"xrqs" max:"16"` // MaxXRQs
}

type fileXRQ struct {
	XRQN       yaml.Node        `yaml:"xrqn"`
	Namespaces []*fileNamespace `yaml:"namespaces" max:"32"` // MaxNamespacesPerXRQ
}

type fileNamespace struct {
	NSID               yaml.Node `yaml:"nsid"`
	ReadIOPS           yaml.Node `yaml:"read_iops"`
	WriteIOPS          yaml.Node `yaml:"write_iops"`
	ReadBlocks         yaml.Node `yaml:"read_blocks"`
	WriteBlocks        yaml.Node `yaml:"write_blocks"`
	InlineShare        yaml.Node `yaml:"inline_share"`
	FlushPerSec        yaml.Node `yaml:"flush_per_sec"`
	ErrorPerSec        yaml.Node `yaml:"error_per_sec"`
	BackendErrorPerSec yaml.Node `yaml:"backend_error_per_sec"`
}

type filePCIe struct {
	Speed             yaml.Node `yaml:"speed"`
	Width             yaml.Node `yaml:"width"`
	MaxSpeed          yaml.Node `yaml:"max_speed"`
	MaxWidth          yaml.Node `yaml:"max_width"`
	SlotSpeed         yaml.Node `yaml:"slot_speed"`
	SlotWidth         yaml.Node `yaml:"slot_width"`
	TargetSpeed       yaml.Node `yaml:"target_speed"`
	CorrectablePerSec yaml.Node `yaml:"correctable_per_sec"` // AER name: rate
}
