package postgres

import (
	"testing"

	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

func TestOutboxConformance(t *testing.T) { storetest.RunDeliveries(t, fresh) }
