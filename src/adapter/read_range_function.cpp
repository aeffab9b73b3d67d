#include "adapter/read_range_function.hpp"

#include "duckdb/common/file_system.hpp"
#include "duckdb/function/scalar_function.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/extension/extension_loader.hpp"

namespace httpfs2 {

using namespace duckdb;

//! Positional: Read(buffer, length, offset), which fails past the end of the file. Sequential: Seek(offset)
//! then Read(buffer, length), which returns what is left when the range passes the end.
static string ReadRange(ClientContext &context, const string &path, int64_t offset, int64_t length, bool sequential) {
	if (offset < 0 || length < 0) {
		throw InvalidInputException("httpfs2_read_range: offset and length must not be negative (got %lld, %lld)",
		                            offset, length);
	}
	auto &fs = FileSystem::GetFileSystem(context);
	// The context's filesystem pushes the client's opener (secrets, settings) itself.
	auto handle = fs.OpenFile(path, FileFlags::FILE_FLAGS_READ);
	string result(static_cast<size_t>(length), '\0');
	if (sequential) {
		handle->Seek(static_cast<idx_t>(offset));
		auto got = handle->Read(&result[0], static_cast<idx_t>(length));
		result.resize(static_cast<size_t>(got));
	} else {
		handle->Read(&result[0], static_cast<idx_t>(length), static_cast<idx_t>(offset));
	}
	return result;
}

static void ReadRangeFunction(DataChunk &args, ExpressionState &state, Vector &result) {
	auto &context = state.GetContext();
	for (idx_t row = 0; row < args.size(); row++) {
		auto path = args.data[0].GetValue(row);
		auto offset = args.data[1].GetValue(row);
		auto length = args.data[2].GetValue(row);
		auto sequential = args.ColumnCount() > 3 ? args.data[3].GetValue(row) : Value::BOOLEAN(false);
		if (path.IsNull() || offset.IsNull() || length.IsNull() || sequential.IsNull()) {
			result.SetValue(row, Value(LogicalType::BLOB));
			continue;
		}
		auto bytes = ReadRange(context, path.GetValue<string>(), offset.GetValue<int64_t>(), length.GetValue<int64_t>(),
		                       sequential.GetValue<bool>());
		result.SetValue(row, Value::BLOB(const_data_ptr_cast(bytes.data()), bytes.size()));
	}
	if (args.AllConstant()) {
		result.SetVectorType(VectorType::CONSTANT_VECTOR);
	}
}

void RegisterReadRangeFunction(ExtensionLoader &loader) {
	ScalarFunctionSet set("httpfs2_read_range");
	vector<LogicalType> arguments = {LogicalType::VARCHAR, LogicalType::BIGINT, LogicalType::BIGINT};
	set.AddFunction(ScalarFunction(arguments, LogicalType::BLOB, ReadRangeFunction));
	arguments.push_back(LogicalType::BOOLEAN);
	set.AddFunction(ScalarFunction(arguments, LogicalType::BLOB, ReadRangeFunction));
	for (auto &function : set.functions) {
		// Reads the file anew each call: never fold or deduplicate it.
		function.SetVolatile();
	}
	loader.RegisterFunction(set);
}

} // namespace httpfs2
