package acpclient

import "github.com/switchboardhq/switchboard/core/settings"

// Options are the ACP runtime's settings.
func Options() []settings.Option {
	return []settings.Option{
		{Env: "SWITCHBOARD_ACP_INIT_SECONDS", Flag: "acp-init-seconds", Default: "60", Usage: "an ACP agent must start and answer initialize and session/new (or session/load) within this many seconds, else its turn ends with an error"},
		{Env: "SWITCHBOARD_ACP_CANCEL_GRACE_SECONDS", Flag: "acp-cancel-grace-seconds", Default: "10", Usage: "an ACP agent whose prompt was cancelled (Stop, turn_seconds) is killed when it has not ended the prompt after this many seconds"},
		{Env: "SWITCHBOARD_ACP_PERMISSION_WAIT_SECONDS", Flag: "acp-permission-wait-seconds", Default: "600", Usage: "an ACP agent's permission request holds its process this long (within the turn's turn_seconds) waiting for a person; then the turn ends requires_action and the answer starts the next"},
	}
}

// LoadHarness reads Options into a harness; the caller adds the sandbox,
// prices, observer and logger.
func LoadHarness(s settings.Values) (*Harness, error) {
	h := &Harness{}
	var err error
	if h.InitTimeout, err = s.Duration("SWITCHBOARD_ACP_INIT_SECONDS"); err != nil {
		return nil, err
	}
	if h.CancelGrace, err = s.Duration("SWITCHBOARD_ACP_CANCEL_GRACE_SECONDS"); err != nil {
		return nil, err
	}
	if h.ParkLimit, err = s.Duration("SWITCHBOARD_ACP_PERMISSION_WAIT_SECONDS"); err != nil {
		return nil, err
	}
	return h, nil
}
