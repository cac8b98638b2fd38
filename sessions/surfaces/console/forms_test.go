package console

import (
	"errors"
	"fmt"
	"testing"

	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

func TestRefusal(t *testing.T) {
	fields := []string{"name", "model", "tools"}
	for _, tc := range []struct {
		name       string
		err        error
		field      string
		form       string
		status     int
		notRefusal bool
	}{
		{"field named", &client.APIError{Status: 400, Message: `field "name" is required`}, "name", "", 400, false},
		{"message starts with the field", &client.APIError{Status: 400, Message: `model "x/y": unknown provider`}, "model", "", 400, false},
		{"indexed field", &client.APIError{Status: 400, Message: `tools[0]: name "mcp_x" is reserved`}, "tools", "", 400, false},
		{"a longer word is not the field", &client.APIError{Status: 400, Message: `names must differ`}, "", `names must differ`, 400, false},
		{"conflict above the form", &client.APIError{Status: 409, Message: `agent name "a" is taken`}, "", `agent name "a" is taken`, 409, false},
		{"wrapped", fmt.Errorf("create: %w", &client.APIError{Status: 404, Message: `agent "x" not found`}), "", `agent "x" not found`, 404, false},
		{"server failure", &client.APIError{Status: 500, Message: "internal error"}, "", "", 0, true},
		{"not the API's", errors.New("pipe closed"), "", "", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe, status, ok := refusal(tc.err, fields...)
			if ok == tc.notRefusal {
				t.Fatalf("ok %v", ok)
			}
			if !ok {
				return
			}
			if status != tc.status || fe.Form != tc.form {
				t.Fatalf("status %d form %q", status, fe.Form)
			}
			if tc.field != "" && fe.For(tc.field) == "" {
				t.Fatalf("nothing under %q: %+v", tc.field, fe)
			}
			if tc.field == "" && len(fe.Fields) != 0 {
				t.Fatalf("under a field: %+v", fe.Fields)
			}
			if !fe.Any() {
				t.Fatal("Any is false")
			}
		})
	}
}
