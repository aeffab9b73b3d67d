// Entry point: wires settings, SQL functions and the filesystem wrappers into a database.

#include "adapter/common/extension_state.hpp"
#include "adapter/extension/read_range_function.hpp"
#include "adapter/extension/settings.hpp"
#include "adapter/extension/cache_functions.hpp"
#include "adapter/extension/stats_functions.hpp"
#include "adapter/filesystem/wrapped_file_system.hpp"
#include "adapter/stores/remote_store.hpp"
#include "duckdb/main/config.hpp"
#include "duckdb/main/connection_manager.hpp"
#include "duckdb/main/database.hpp"
#include "duckdb/main/extension/extension_loader.hpp"
#include "duckdb/planner/extension_callback.hpp"

namespace httpfs2 {

using namespace duckdb;

//! Swaps each wrappable filesystem present for a wrapper under the same name (so disabled_filesystems still
//! applies). Runs at load time only: swapping while queries run could race with their lookups.
static void WrapRemoteFileSystems(DatabaseInstance &db, const std::shared_ptr<ExtensionState> &state) {
	auto &vfs = db.GetFileSystem();
	for (auto &name : vfs.ListSubSystems()) {
		if (!RemoteStore::Wraps(name) || !state->MarkWrapped(name)) {
			continue;
		}
		auto inner = vfs.ExtractSubSystem(name);
		if (!inner) {
			continue; // disabled by configuration: nothing to wrap
		}
		vfs.RegisterSubSystem(make_uniq<WrappedFileSystem>(std::move(inner), state));
	}
}

//! Wraps filesystems of extensions loaded after httpfs2 (explicitly or by autoload); keeps the state alive
//! for as long as the database's configuration.
class WrapOnLoadCallback : public ExtensionCallback {
public:
	explicit WrapOnLoadCallback(std::shared_ptr<ExtensionState> state_p) : state(std::move(state_p)) {
	}

	void OnExtensionLoaded(DatabaseInstance &db, const string &name) override {
		WrapRemoteFileSystems(db, state);
	}

	//! The database tears its logging down before its filesystems, and a handle of httpfs logs when it closes: the
	//! handles httpfs2 keeps across queries are closed when the last connection goes, not with the filesystem. So do
	//! the hedged GETs that lost and still run (they use httpfs's client, which goes before the filesystems): the
	//! last close waits for them, at most httpfs's timeout.
	void OnConnectionClosed(ClientContext &context) override {
		if (DatabaseInstance::GetDatabase(context).GetConnectionManager().GetConnectionCount() <= 1) {
			state->ReleaseHandles();
			state->request_threads.WaitIdle();
		}
	}

private:
	std::shared_ptr<ExtensionState> state;
};

static void LoadInternal(ExtensionLoader &loader) {
	auto &db = loader.GetDatabaseInstance();
	auto &config = DBConfig::GetConfig(db);
	auto state = ExtensionState::GetOrCreate(db);
	RegisterSettings(config);
	RegisterStatsFunctions(loader);
	RegisterCacheFunctions(loader);
	RegisterReadRangeFunction(loader);
	ExtensionCallback::Register(config, make_shared_ptr<WrapOnLoadCallback>(state));
	WrapRemoteFileSystems(db, state);
	loader.SetDescription("Parallel range reads for remote filesystems on an IO pool of their own");
}

} // namespace httpfs2

extern "C" {
DUCKDB_CPP_EXTENSION_ENTRY(httpfs2, loader) {
	httpfs2::LoadInternal(loader);
}
}
