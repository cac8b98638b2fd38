package bolt

import (
	"testing"

	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

func TestSkillStoreConformance(t *testing.T) { storetest.RunSkills(t, fresh) }
