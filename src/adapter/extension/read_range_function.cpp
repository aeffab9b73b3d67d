#include "adapter/extension/read_range_function.hpp"

#include "duckdb/common/file_system.hpp"
#include "duckdb/function/scalar_function.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/extension/extension_loader.hpp"

namespace httpfs2 {

using namespace duckdb;

//! Positional: Read(buffer, length, offset), which fails past the end of the file. Sequential: Seek(offset)
//! then Read(buffer, length), which returns what is left when the range passes the end.
static string ReadRange(FileHandle &handle, int64_t offset, int64_t length, bool sequential) {
	if (offset < 0 || length < 0) {
		throw InvalidInputException("httpfs2_read_range: offset and length must not be negative (got %lld, %lld)",
		                            offset, length);
	}
	string result(static_cast<size_t>(length), '\0');
	if (sequential) {
		handle.Seek(static_cast<idx_t>(offset));
		auto got = handle.Read(&result[0], static_cast<idx_t>(length));
		result.resize(static_cast<size_t>(got));
	} else {
		handle.Read(&result[0], static_cast<idx_t>(length), static_cast<idx_t>(offset));
	}
	return result;
}

static Value BlobOf(const string &bytes) {
	return Value::BLOB(const_data_ptr_cast(bytes.data()), bytes.size());
}

//! One row: a range, or (lists of offsets and lengths) ranges read one after another through one open handle, the
//! way a scan reads a file, so that read-ahead sees them as one access pattern.
static Value ReadRow(ClientContext &context, const Value &path, const Value &offset, const Value &length,
                     bool sequential) {
	// The context's filesystem pushes the client's opener (secrets, settings) itself.
	auto handle = FileSystem::GetFileSystem(context).OpenFile(path.GetValue<string>(), FileFlags::FILE_FLAGS_READ);
	if (offset.type().id() != LogicalTypeId::LIST) {
		return BlobOf(ReadRange(*handle, offset.GetValue<int64_t>(), length.GetValue<int64_t>(), sequential));
	}
	auto &offsets = ListValue::GetChildren(offset);
	auto &lengths = ListValue::GetChildren(length);
	if (offsets.size() != lengths.size()) {
		throw InvalidInputException("httpfs2_read_range: %llu offsets but %llu lengths", offsets.size(),
		                            lengths.size());
	}
	vector<Value> blobs;
	for (idx_t i = 0; i < offsets.size(); i++) {
		if (offsets[i].IsNull() || lengths[i].IsNull()) {
			throw InvalidInputException("httpfs2_read_range: offset and length must not be NULL");
		}
		blobs.push_back(
		    BlobOf(ReadRange(*handle, offsets[i].GetValue<int64_t>(), lengths[i].GetValue<int64_t>(), sequential)));
	}
	return Value::LIST(LogicalType::BLOB, std::move(blobs));
}

static void ReadRangeFunction(DataChunk &args, ExpressionState &state, Vector &result) {
	auto &context = state.GetContext();
	for (idx_t row = 0; row < args.size(); row++) {
		auto path = args.data[0].GetValue(row);
		auto offset = args.data[1].GetValue(row);
		auto length = args.data[2].GetValue(row);
		auto sequential = args.ColumnCount() > 3 ? args.data[3].GetValue(row) : Value::BOOLEAN(false);
		if (path.IsNull() || offset.IsNull() || length.IsNull() || sequential.IsNull()) {
			result.SetValue(row, Value(result.GetType()));
			continue;
		}
		result.SetValue(row, ReadRow(context, path, offset, length, sequential.GetValue<bool>()));
	}
	if (args.AllConstant()) {
		result.SetVectorType(VectorType::CONSTANT_VECTOR);
	}
}

void RegisterReadRangeFunction(ExtensionLoader &loader) {
	ScalarFunctionSet set("httpfs2_read_range");
	for (auto &range : vector<LogicalType> {LogicalType::BIGINT, LogicalType::LIST(LogicalType::BIGINT)}) {
		auto returns = range.id() == LogicalTypeId::LIST ? LogicalType::LIST(LogicalType::BLOB) : LogicalType::BLOB;
		vector<LogicalType> arguments = {LogicalType::VARCHAR, range, range};
		for (bool sequential : {false, true}) {
			if (sequential) {
				arguments.push_back(LogicalType::BOOLEAN);
			}
			ScalarFunction function(arguments, returns, ReadRangeFunction);
			// Reads the file anew each call: never fold or deduplicate it.
			function.SetVolatile();
			set.AddFunction(function);
		}
	}
	loader.RegisterFunction(set);
}

} // namespace httpfs2
