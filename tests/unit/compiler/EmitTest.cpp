//===- EmitTest.cpp - Weight blob, header and linker-script fragment ------===//
#include "TestGraphs.h"
#include "codegen/ModelCodegen.h"
#include "emit/HeaderWriter.h"
#include "emit/LinkerScript.h"
#include "emit/OutputFiles.h"
#include "emit/WeightsBlob.h"
#include "ir/Escape.h"
#include "target/TargetInfo.h"

#include <cstring>
#include <cuvil/blob.h>
#include <filesystem>
#include <functional>
#include <gtest/gtest.h>
#include <set>

#include "weights_generated.h"

using namespace cuvil;

namespace {
struct Fixture {
  std::unique_ptr<Graph> G = test::convBnRelu();
  MemoryPlan Plan;
  std::vector<uint8_t> Blob;
  Fixture() {
    Plan = std::move(*planMemory(*G, {64}));
    Blob = buildWeightsBlob(Plan, "cbr", "u74-mc", 0x1234);
  }
};

/// A copy of the blob at a 64-byte aligned address.
struct Aligned {
  alignas(64) uint8_t Bytes[8192];
};
} // namespace

TEST(Emit, BlobIsAValidFlatBufferWithTheTensorTable) {
  Fixture F;
  flatbuffers::Verifier V(F.Blob.data(), F.Blob.size());
  ASSERT_TRUE(schema::VerifyWeightsBuffer(V));
  ASSERT_TRUE(schema::WeightsBufferHasIdentifier(F.Blob.data()));
  const schema::Weights *W = schema::GetWeights(F.Blob.data());
  EXPECT_EQ(W->header()->schema_version(), WeightsSchemaVersion);
  EXPECT_EQ(W->header()->model_name()->str(), "cbr");
  EXPECT_EQ(W->header()->structure_hash(), 0x1234u);
  ASSERT_EQ(W->tensors()->size(), F.Plan.Weights.size());
  const schema::Tensor *T0 = W->tensors()->Get(0);
  EXPECT_EQ(T0->name()->str(), "w");
  EXPECT_EQ(T0->size(), 4u * 72);
  // Data is at its planned offset, and aligned within the buffer.
  const uint8_t *Data = W->data()->data();
  EXPECT_EQ((Data - F.Blob.data()) % 64, 0);
  EXPECT_EQ(std::memcmp(Data + T0->offset(), F.Plan.Weights[0]->data().data(),
                        T0->size()),
            0);
}

TEST(Emit, RuntimeBlobCheckAcceptsAndRejects) {
  Fixture F;
  ASSERT_LE(F.Blob.size(), sizeof(Aligned::Bytes));
  auto A = std::make_unique<Aligned>();
  std::memcpy(A->Bytes, F.Blob.data(), F.Blob.size());
  const uint8_t *Data = nullptr;
  uint64_t N = F.Blob.size();
  const uint64_t Need = F.Plan.WeightsSize;
  for (unsigned Flags : {0u, CUVIL_BLOB_VERIFY_SHA256}) {
    EXPECT_EQ(cuvil_blob_open(A->Bytes, N, 0x1234, 64, Need, Flags, &Data),
              CUVIL_OK);
    EXPECT_EQ(Data, schema::GetWeights(A->Bytes)->data()->data());
  }
  EXPECT_EQ(cuvil_blob_open(A->Bytes, N, 0x9999, 64, 0, 0, &Data),
            CUVIL_ERR_BLOB_STRUCTURE);
  EXPECT_EQ(cuvil_blob_open(A->Bytes, N, 0x1234, 64, Need + 64, 0, &Data),
            CUVIL_ERR_BLOB_SIZE);
  EXPECT_EQ(cuvil_blob_open(A->Bytes, 7, 0x1234, 64, 0, 0, &Data),
            CUVIL_ERR_BLOB_IDENT);
  EXPECT_EQ(cuvil_blob_open(A->Bytes, N / 2, 0x1234, 64, 0, 0, &Data),
            CUVIL_ERR_BLOB_FORMAT);
  // The digest the blob states is the SHA-256 of its data.
  const uint8_t *Digest = nullptr;
  ASSERT_EQ(cuvil_blob_sha256(A->Bytes, N, &Digest), CUVIL_OK);
  uint8_t Sha[CUVIL_SHA256_BYTES];
  cuvil_sha256(Data, Need, Sha);
  EXPECT_EQ(std::memcmp(Sha, Digest, sizeof(Sha)), 0);
  // Flip one weight byte: the CRC-32 catches it.
  uint8_t *Byte = &A->Bytes[Data - A->Bytes + 5];
  *Byte ^= 1;
  EXPECT_EQ(cuvil_blob_open(A->Bytes, N, 0x1234, 64, 0, 0, &Data),
            CUVIL_ERR_BLOB_CHECKSUM);
  *Byte ^= 1;
  // A stated digest that is not the data's: only the SHA-256 check sees it
  // (the CRC-32 covers the data alone).
  A->Bytes[Digest - A->Bytes] ^= 0x80;
  EXPECT_EQ(cuvil_blob_open(A->Bytes, N, 0x1234, 64, 0, 0, &Data), CUVIL_OK);
  EXPECT_EQ(cuvil_blob_open(A->Bytes, N, 0x1234, 64, 0,
                            CUVIL_BLOB_VERIFY_SHA256, &Data),
            CUVIL_ERR_BLOB_DIGEST);
  // Another schema version: refused before anything else is read.
  std::memcpy(A->Bytes, F.Blob.data(), F.Blob.size());
  auto *Hdr = schema::GetWeights(A->Bytes)->header();
  auto *Ver =
      reinterpret_cast<const uint8_t *>(Hdr) +
      reinterpret_cast<const flatbuffers::Table *>(Hdr)->GetOptionalFieldOffset(
          schema::Header::VT_SCHEMA_VERSION);
  A->Bytes[Ver - A->Bytes] = 1;
  EXPECT_EQ(cuvil_blob_open(A->Bytes, N, 0x1234, 64, 0, 0, &Data),
            CUVIL_ERR_BLOB_VERSION);
}

TEST(Emit, StructureHashIgnoresWeightsTheKernelsRead) {
  auto T = loadTarget("u74-mc");
  ASSERT_TRUE(bool(T));
  // Conv reads w and b through pointers; the batch-norm parameters are
  // read by nobody at run time (as if the compiler had built them into
  // the code), so their values are part of the structure.
  auto Hash = [&](const std::function<void(Graph &)> &Change,
                  const std::string &Target = "u74-mc") {
    std::unique_ptr<Graph> G = test::convBnRelu();
    Change(*G);
    MemoryPlan Plan = std::move(*planMemory(*G, {64}));
    GraphLowering L(G->nodes().size());
    const Node &Conv = *G->nodes()[0];
    L[0].HasCode = true;
    L[0].Calls.push_back(
        {"cuvil_k_conv",
         {KernelArg::tensor(Conv.input(1)), KernelArg::tensor(Conv.input(2))},
         false});
    auto Tgt = loadTarget(Target);
    return structureHash(*G, L, Plan, *Tgt);
  };
  auto SetFirst = [](const char *Name, float X) {
    return [=](Graph &G) {
      for (const auto &V : G.values())
        if (V->name() == Name) {
          std::vector<uint8_t> D = V->data();
          std::memcpy(D.data(), &X, sizeof(X));
          V->setData(D);
        }
    };
  };
  uint64_t Base = Hash([](Graph &) {});
  EXPECT_EQ(Hash([](Graph &) {}), Base);
  EXPECT_EQ(Hash(SetFirst("w", 42.0f)), Base);
  EXPECT_EQ(Hash(SetFirst("b", -1.0f)), Base);
  EXPECT_NE(Hash(SetFirst("scale", 3.0f)), Base);
  EXPECT_NE(Hash([](Graph &) {}, "a78"), Base);
  EXPECT_NE(Hash([](Graph &G) { G.nodes()[0]->setAttr("group", int64_t(1)); }),
            Base);
}

TEST(Emit, HeaderDeclaresTheApiAndSizes) {
  Fixture F;
  auto T = loadTarget("u74-mc");
  ASSERT_TRUE(bool(T));
  HeaderInfo HI;
  HI.ModelName = "cbr";
  HI.SourceFile = "cbr.onnx";
  HI.BlobSize = F.Blob.size();
  HI.StructureHash = 0x1234;
  std::string H = writeHeader(*F.G, F.Plan, *T, HI);
  EXPECT_NE(H.find("#define CUVIL_CBR_ARENA_0_SIZE " +
                   std::to_string(F.Plan.Arenas[0].Size) + "u"),
            std::string::npos)
      << H;
  EXPECT_NE(H.find("#define CUVIL_CBR_NUM_ARENAS 1"), std::string::npos);
  EXPECT_NE(H.find("#define CUVIL_CBR_INPUT_0_SHAPE {1, 2, 4, 4}"),
            std::string::npos);
  EXPECT_NE(H.find("#define CUVIL_CBR_OUTPUT_BYTES_LIST {256u}"),
            std::string::npos);
  EXPECT_NE(H.find("int cuvil_cbr_init(cuvil_cbr_t *m, void *const *arenas,"),
            std::string::npos);
  EXPECT_NE(
      H.find("int cuvil_cbr_run(cuvil_cbr_t *m, const float *x, float *y);"),
      std::string::npos)
      << H;
  EXPECT_NE(H.find("#define CUVIL_ERR_BLOB_CHECKSUM (-16)"), std::string::npos);
  EXPECT_NE(H.find("#define CUVIL_CBR_STRUCTURE_HASH 0x0000000000001234ull"),
            std::string::npos);
}

TEST(Emit, StatusCodesAgreeInRuntimeHeaderAndCodegen) {
  Fixture F;
  auto T = loadTarget("u74-mc");
  ASSERT_TRUE(bool(T));
  HeaderInfo HI;
  HI.ModelName = "cbr";
  HI.SourceFile = "cbr.onnx";
  HI.BlobSize = F.Blob.size();
  HI.StructureHash = 0x1234;
  std::string H = writeHeader(*F.G, F.Plan, *T, HI);
  // Every code the generated init/run return: the runtime's value, the
  // generated header's and codegen's must be one.
  struct Code {
    const char *Name;
    int Runtime, Codegen;
  } Codes[] = {
      {"ERR_NULL", CUVIL_ERR_NULL, StatusNullArgument},
      {"ERR_ARENA_ALIGN", CUVIL_ERR_ARENA_ALIGN, StatusArenaMisaligned},
      {"ERR_NO_WEIGHTS", CUVIL_ERR_NO_WEIGHTS, StatusNoWeights},
      {"ERR_NOT_INIT", CUVIL_ERR_NOT_INIT, StatusNotInitialized},
      {"ERR_ARENA_OVERLAP", CUVIL_ERR_ARENA_OVERLAP, StatusArenaOverlap},
      {"ERR_ARENA_RANGE", CUVIL_ERR_ARENA_RANGE, StatusArenaRange},
      {"ERR_BOUNDS", CUVIL_ERR_BOUNDS, StatusBounds},
      {"ERR_BLOB_ALIGN", CUVIL_ERR_BLOB_ALIGN, StatusBlobAlign},
      {"ERR_BLOB_SHORT", CUVIL_ERR_BLOB_SHORT, StatusBlobShort},
  };
  std::set<int> Seen;
  for (const Code &C : Codes) {
    EXPECT_EQ(C.Runtime, C.Codegen) << C.Name;
    EXPECT_NE(H.find("#define CUVIL_" + std::string(C.Name) + " (" +
                     std::to_string(C.Runtime) + ")"),
              std::string::npos)
        << C.Name;
    EXPECT_TRUE(Seen.insert(C.Runtime).second) << C.Name << " is not distinct";
  }
  for (int Blob :
       {CUVIL_ERR_BLOB_IDENT, CUVIL_ERR_BLOB_FORMAT, CUVIL_ERR_BLOB_VERSION,
        CUVIL_ERR_BLOB_STRUCTURE, CUVIL_ERR_BLOB_SIZE, CUVIL_ERR_BLOB_CHECKSUM,
        CUVIL_ERR_BLOB_DIGEST})
    EXPECT_TRUE(Seen.insert(Blob).second) << Blob << " is not distinct";
}

TEST(Emit, LinkerScriptPlacesArenaAndWeights) {
  Fixture F;
  auto T = loadTarget("u74-mc");
  ASSERT_TRUE(bool(T));
  F.Plan.Arenas[0].Region = "L2LIM";
  std::string S = writeLinkerScript("cbr", F.Plan, *T, "DDR", true);
  EXPECT_NE(S.find(".cuvil.cbr.arena.L2LIM (NOLOAD) : ALIGN(64)"),
            std::string::npos)
      << S;
  EXPECT_NE(S.find("} > L2LIM"), std::string::npos);
  EXPECT_NE(S.find("KEEP(*(.cuvil.cbr.weights))"), std::string::npos);
  EXPECT_NE(S.find("} > DDR"), std::string::npos);
  EXPECT_EQ(writeLinkerScript("cbr", F.Plan, *T, "DDR", false).find(".weights"),
            std::string::npos);
}

TEST(Emit, CIdentifiers) {
  EXPECT_EQ(cIdentifier("input.1"), "input_1");
  EXPECT_EQ(cIdentifier("9lives"), "_9lives");
  EXPECT_EQ(cIdentifier(""), "_");
  EXPECT_EQ(cIdentifier("caf\xc3\xa9"), "caf__");
  EXPECT_TRUE(isSafeCIdentifier("input_1"));
  for (const char *Bad :
       {"int", "while", "m", "NULL", "uint8_t", "class", "__x", "_Upper",
        "cuvil_kws_run", "CUVIL_OK", "", "a.b"})
    EXPECT_FALSE(isSafeCIdentifier(Bad)) << Bad;
  EXPECT_FALSE(isSafeCIdentifier(std::string(64, 'a')));
}

TEST(Emit, CStringLiterals) {
  EXPECT_EQ(cStringLiteral("plain"), "\"plain\"");
  EXPECT_EQ(cStringLiteral("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(cStringLiteral("?"
                           "?/"),
            "\"\\?\\?/\"");
  EXPECT_EQ(cStringLiteral("n\n\t"), "\"n\\n\\t\"");
  // Octal escapes: a digit after one cannot extend it (\x would).
  EXPECT_EQ(cStringLiteral(std::string("\xff"
                                       "1\0",
                                       3)),
            "\"\\3771\\000\"");
}

TEST(Emit, CComments) {
  EXPECT_EQ(cComment("a */ b /* c"), "a * / b / * c");
  EXPECT_EQ(cComment("ends with *"), "ends with * ");
  EXPECT_EQ(cComment("line\nbreak"), "line\\x0abreak");
  EXPECT_EQ(cComment("\xff\xfe"), "\\xff\\xfe");
  std::string Long = cComment(std::string(10000, 'x'));
  EXPECT_EQ(Long, std::string(200, 'x') + "...");
  // A cut never splits a UTF-8 character or an escape.
  EXPECT_EQ(cComment("ab\xc3\xa9", 3), "ab...");
  EXPECT_EQ(cComment("a\x01", 3), "a...");
  EXPECT_EQ(cComment("*/", 1), "* ...");
}

TEST(Emit, PrintableAndXml) {
  EXPECT_EQ(printable("caf\xc3\xa9"), "caf\xc3\xa9"); // valid UTF-8 stays
  EXPECT_EQ(printable("caf\xe9"), "caf\\xe9");
  EXPECT_EQ(printable("a\nb\x7f"), "a\\x0ab\\x7f");
  EXPECT_EQ(xmlText("<a href=\"x\">&'\n"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&apos;\\x0a");
  EXPECT_EQ(xmlEscape("a\nb<"), "a\nb&lt;");
  EXPECT_TRUE(isLinkerScriptName("L2LIM"));
  EXPECT_TRUE(isLinkerScriptName("_ram0"));
  for (const char *Bad : {"", "0RAM", "RAM }", "a-b", "R\xc3\xa9"})
    EXPECT_FALSE(isLinkerScriptName(Bad)) << Bad;
}

// All or nothing: when one destination cannot be written, none is, and the
// early check says so before any work.
TEST(OutputFiles, OneUnwritableDestinationWritesNothing) {
  namespace fs = std::filesystem;
  const fs::path Dir = fs::temp_directory_path() /
                       ("cuvil-output-files-" + std::to_string(::getpid()));
  fs::remove_all(Dir);
  fs::create_directories(Dir);
  const std::string Good = (Dir / "m.o").string();
  const std::string Bad = (Dir / "missing" / "m.h").string();
  std::vector<OutputFile> Files = {{Good, "object", "the object (--out)"},
                                   {Bad, "header", "the header (--header)"}};
  llvm::Error Early = checkOutputFiles(Files);
  ASSERT_TRUE(bool(Early));
  EXPECT_NE(llvm::toString(std::move(Early)).find("the header (--header)"),
            std::string::npos);
  llvm::Error Late = writeOutputFiles(Files);
  ASSERT_TRUE(bool(Late));
  llvm::consumeError(std::move(Late));
  EXPECT_FALSE(fs::exists(Good));
  EXPECT_TRUE(fs::is_empty(Dir)); // no temporary left either
  Files.pop_back();
  EXPECT_FALSE(bool(checkOutputFiles(Files)));
  EXPECT_FALSE(bool(writeOutputFiles(Files)));
  EXPECT_TRUE(fs::exists(Good));
  fs::remove_all(Dir);
}
