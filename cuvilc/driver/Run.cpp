//===- Run.cpp - `cuvilc run`: one inference of a compiled model ----------===//
//
// The model is compiled exactly as `cuvilc build` compiles it and run once:
// in this process (runner/HostRunner.h) for a target the build machine
// executes, under QEMU (runner/BoardRunner.h) for a board. Inputs come from
// .npy files or from a seeded generator; outputs are printed, written as
// .npy, compared with references, and summed up as JSON.
//
//===----------------------------------------------------------------------===//
#include "driver/Compile.h"
#include "frontend/onnx/LeaveOut.h"
#include "ir/Diagnostic.h"
#include "quantize/TensorFile.h"
#include "runner/BoardRunner.h"
#include "runner/HostRunner.h"
#include "runner/Npy.h"
#include "runner/OrtReference.h"
#include "runner/Profile.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <iostream>
#include <limits>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/TargetParser/Host.h>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

namespace fs = std::filesystem;

namespace cuvil {

namespace {

/// What one run measured: the outputs' bytes and its cost.
struct RunResult {
  std::vector<std::string> Inputs; ///< The data the model ran on.
  std::vector<std::string> Outputs;
  std::optional<uint64_t> Instructions, Cycles; ///< Boards.
  std::optional<double> RunUs;                  ///< Host: wall time.
  int64_t ArenaBytes = 0;
  size_t WeightBytes = 0;
  std::optional<ProfileData> Profile; ///< --profile.
};

size_t elementCount(const RunnerTensor &T) {
  return dtypeSize(T.Ty) ? T.Bytes / dtypeSize(T.Ty) : 0;
}

std::string shapeOf(const std::vector<int64_t> &Shape) {
  return quant::shapeText(Shape);
}

/// A tensor of an --input or --compare file: .npy (or ONNX TensorProto
/// .pb, which `cuvilc quantize` reads too).
llvm::Expected<quant::FileTensor> readTensor(const std::string &Path) {
  if (!quant::isTensorFile(Path))
    return makeError("'{}': expected a .npy file (or an ONNX TensorProto "
                     ".pb)",
                     Path);
  return quant::readTensorFile(Path);
}

/// The --input word that leaves an optional input out (run gets NULL).
constexpr std::string_view LeftOut = "none";

/// Whether the run leaves input I out (--input none).
bool leftOut(const RunOptions &O, size_t I) {
  return I < O.Inputs.size() && O.Inputs[I] == LeftOut;
}

/// Input data from the --input files, each checked against the model's
/// input (type and shape); none for an optional input left out (its data
/// is empty).
llvm::Expected<std::vector<std::string>>
readInputs(const std::vector<std::string> &Files,
           const std::vector<RunnerTensor> &Ins) {
  if (Files.size() != Ins.size()) {
    std::vector<std::string> Want;
    for (const RunnerTensor &T : Ins)
      Want.push_back(
          fmt::format("'{}' {} {}", T.Name, dtypeName(T.Ty), shapeOf(T.Shape)));
    return usageError(fmt::format(
        "the model has {} input(s), {} --input file(s) given: give one .npy "
        "per input, in order ({}), or none for random data",
        Ins.size(), Files.size(), fmt::join(Want, ", ")));
  }
  std::vector<std::string> Data;
  for (size_t I = 0; I < Files.size(); ++I) {
    const RunnerTensor &In = Ins[I];
    if (Files[I] == LeftOut) {
      if (!In.Optional)
        return usageError(fmt::format(
            "--input {}: input {} ('{}') is not optional: only an input of "
            "ONNX optional type that the model tests can be left out",
            LeftOut, I, In.Name));
      Data.emplace_back();
      continue;
    }
    auto T = readTensor(Files[I]);
    if (!T)
      return T.takeError();
    if (T->Ty != In.Ty || T->Shape != In.Shape)
      return makeError("'{}': input {} ('{}') must be {} {}, the file holds "
                       "{} {}",
                       Files[I], I, In.Name, dtypeName(In.Ty),
                       shapeOf(In.Shape), dtypeName(T->Ty), shapeOf(T->Shape));
    Data.emplace_back(T->Data.begin(), T->Data.end());
  }
  return Data;
}

/// Random inputs from Seed (docs/run.md): floats uniform in [-1, 1),
/// integers uniform in [0, 8), bools 0 or 1; one mt19937_64 stream over
/// the inputs in order, so that the data is the same on every machine.
std::vector<std::string> randomInputs(const std::vector<RunnerTensor> &Ins,
                                      uint64_t Seed) {
  std::mt19937_64 Gen(Seed);
  std::vector<std::string> Data;
  for (const RunnerTensor &In : Ins) {
    std::string D(In.Bytes, '\0');
    auto *P = reinterpret_cast<uint8_t *>(D.data());
    // Floats: k / 2^(B-1) - 1 for k uniform in [0, 2^B), B the type's
    // significand bits: exact in the type, so never rounded up to 1.
    unsigned Bits = In.Ty == DType::F32    ? 24
                    : In.Ty == DType::F64  ? 53
                    : In.Ty == DType::F16  ? 11
                    : In.Ty == DType::BF16 ? 8
                                           : 0;
    for (size_t I = 0, N = elementCount(In); I < N; ++I) {
      uint64_t R = Gen();
      double V;
      if (Bits)
        V = std::ldexp(static_cast<double>(R >> (64 - Bits)),
                       1 - static_cast<int>(Bits)) -
            1.0;
      else if (In.Ty == DType::Bool)
        V = static_cast<double>(R & 1);
      else
        V = static_cast<double>(R % 8);
      setElementValue(In.Ty, P, I, V);
    }
    Data.push_back(std::move(D));
  }
  return Data;
}

/// A file name for an output: its name with every character but letters,
/// digits, '-', '_' and '.' replaced by '_', never hidden nor empty, and
/// made unique among the outputs by its index.
std::string outputFileName(const std::string &Name, size_t Index,
                           std::set<std::string> &Used) {
  std::string S;
  for (char C : Name)
    S += std::isalnum(static_cast<unsigned char>(C)) || C == '-' || C == '_' ||
                 C == '.'
             ? C
             : '_';
  if (S.empty() || S[0] == '.')
    S = "output_" + std::to_string(Index) + S;
  if (!Used.insert(S).second) {
    S += "_" + std::to_string(Index);
    Used.insert(S);
  }
  return S + ".npy";
}

std::string valueText(DType T, double V) {
  if (T == DType::F32 || T == DType::F16 || T == DType::BF16 || T == DType::F64)
    return fmt::format("{:.6g}", V);
  return fmt::format("{}", V);
}

/// The values of an output: all of them up to 32, else the first 16 and
/// the minimum, maximum and mean.
void printValues(std::ostream &Out, const RunnerTensor &T,
                 const std::string &Data) {
  const auto *P = reinterpret_cast<const uint8_t *>(Data.data());
  size_t N = elementCount(T);
  std::vector<std::string> Shown;
  for (size_t I = 0; I < N && (N <= 32 || I < 16); ++I)
    Shown.push_back(valueText(T.Ty, elementValue(T.Ty, P, I)));
  Out << "  values: " << fmt::format("{}", fmt::join(Shown, " "))
      << (N > 32 ? " ..." : "") << "\n";
  if (N <= 32)
    return;
  double Min = std::numeric_limits<double>::infinity(), Max = -Min, Sum = 0;
  for (size_t I = 0; I < N; ++I) {
    double V = elementValue(T.Ty, P, I);
    Min = std::min(Min, V);
    Max = std::max(Max, V);
    Sum += V;
  }
  Out << fmt::format("  {} elements: min {} max {} mean {:.6g}\n", N,
                     valueText(T.Ty, Min), valueText(T.Ty, Max),
                     Sum / static_cast<double>(N));
}

struct Comparison {
  double MaxAbs = 0, MaxRel = 0;
  bool Ok = true;
};

/// Compares an output with a reference of the same shape (numpy's
/// allclose, with NaN equal to NaN); the reference's element type may
/// differ (values are compared as numbers).
Comparison compareValues(const RunnerTensor &T, const std::string &Data,
                         DType RefTy, const uint8_t *Ref, double Atol,
                         double Rtol) {
  const auto *P = reinterpret_cast<const uint8_t *>(Data.data());
  Comparison C;
  for (size_t I = 0, N = elementCount(T); I < N; ++I) {
    double Got = elementValue(T.Ty, P, I);
    double Want = elementValue(RefTy, Ref, I);
    if (std::isnan(Got) && std::isnan(Want))
      continue;
    double Abs = std::fabs(Got - Want);
    if (std::isnan(Abs))
      Abs = std::numeric_limits<double>::infinity();
    C.MaxAbs = std::max(C.MaxAbs, Abs);
    if (Want != 0)
      C.MaxRel = std::max(C.MaxRel, Abs / std::fabs(Want));
    if (!(Abs <= Atol + Rtol * std::fabs(Want)))
      C.Ok = false;
  }
  return C;
}

/// Compares an output with the reference in File, which must have the
/// output's shape.
llvm::Expected<Comparison> compareOutput(const RunnerTensor &T,
                                         const std::string &Data,
                                         const std::string &File, double Atol,
                                         double Rtol) {
  auto Ref = readTensor(File);
  if (!Ref)
    return Ref.takeError();
  if (Ref->Shape != T.Shape)
    return makeError("'{}': output '{}' is {} {}, the reference is {} {}", File,
                     T.Name, dtypeName(T.Ty), shapeOf(T.Shape),
                     dtypeName(Ref->Ty), shapeOf(Ref->Shape));
  return compareValues(T, Data, Ref->Ty, Ref->Data.data(), Atol, Rtol);
}

/// The references of --compare (files) or --compare-ort (ONNX Runtime on
/// the model that was compiled, Onnx, and the same inputs), with what
/// they are called in the summary.
struct References {
  std::vector<std::string> Labels;
  std::vector<std::string> OrtData; ///< --compare-ort: float32 bytes.
};

llvm::Expected<References> references(const RunOptions &O,
                                      std::optional<std::string_view> Onnx,
                                      const std::vector<RunnerTensor> &Ins,
                                      const std::vector<RunnerTensor> &Outs,
                                      const RunResult &R, std::ostream &Log) {
  References Refs;
  if (!O.CompareOrt) {
    Refs.Labels = O.Compare;
    return Refs;
  }
  std::string Bytes;
  if (Onnx) {
    Bytes = std::string(*Onnx);
  } else {
    auto B = llvm::MemoryBuffer::getFile(O.Build.Model, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
    if (!B)
      return makeError("'{}': cannot read: {}", O.Build.Model,
                       B.getError().message());
    Bytes = (*B)->getBuffer().str();
  }
  // ORT cannot leave an input out: the model it runs holds an empty
  // optional in its place (frontend/onnx/LeaveOut.h).
  std::vector<std::string> Gone, InData;
  std::vector<RunnerTensor> Fed;
  for (size_t I = 0; I < Ins.size(); ++I) {
    if (leftOut(O, I)) {
      Gone.push_back(Ins[I].Name);
      continue;
    }
    Fed.push_back(Ins[I]);
    InData.push_back(R.Inputs[I]);
  }
  if (!Gone.empty()) {
    auto Without = leaveOutInputs(Bytes, Gone);
    if (!Without)
      return Without.takeError();
    Bytes = std::move(*Without);
  }
  auto Data = ortOutputs(Bytes, Fed, InData, Outs, "", Log);
  if (!Data)
    return Data.takeError();
  Refs.OrtData = std::move(*Data);
  Refs.Labels.assign(Outs.size(), "ONNX Runtime");
  return Refs;
}

/// JSON has no infinity: such an error is written as null.
nlohmann::ordered_json finiteOrNull(double V) {
  if (std::isfinite(V))
    return V;
  return nullptr;
}

/// Whether T runs in this process (a target of the build machine), or the
/// reason it does not.
llvm::Error runsHere(const TargetInfo &T) {
  return checkRunsOn(T, llvm::sys::getProcessTriple(),
                     llvm::sys::getHostCPUFeatures());
}

/// An output whose shape the branch of an If picked: T takes the shape the
/// run gave, Data its bytes (the first of the buffer planned for the
/// larger branch).
void setOutputShape(RunnerTensor &T, std::string &Data,
                    const std::vector<int64_t> &Shape) {
  if (Shape == T.Shape)
    return;
  size_t Count = 1;
  for (int64_t D : Shape)
    Count *= static_cast<size_t>(D);
  T.Shape = Shape;
  T.Bytes = std::min(Count * dtypeSize(T.Ty), Data.size());
  Data.resize(T.Bytes);
}

llvm::Expected<RunResult> runOnHost(const RunOptions &O,
                                    std::optional<std::string_view> Bytes,
                                    std::vector<RunnerTensor> &Ins,
                                    std::vector<RunnerTensor> &Outs,
                                    std::ostream &Log) {
  auto M = HostModel::compile(O.Build, Log, Bytes);
  if (!M)
    return M.takeError();
  Ins = (*M)->inputs();
  Outs = (*M)->outputs();
  auto In =
      O.Inputs.empty() ? randomInputs(Ins, O.Seed) : readInputs(O.Inputs, Ins);
  if (!In)
    return In.takeError();
  RunResult R;
  R.Inputs = *In;
  std::vector<const void *> InPtrs;
  for (size_t I = 0; I < In->size(); ++I)
    InPtrs.push_back(leftOut(O, I) ? nullptr : (*In)[I].data());
  // All buffers first, then their addresses: growing the vector moves its
  // strings, and a short one (a 4-byte scalar output) keeps its bytes
  // inside the string object, so an address taken earlier would dangle.
  for (const RunnerTensor &T : Outs)
    R.Outputs.emplace_back(T.Bytes, '\0');
  std::vector<void *> OutPtrs;
  for (std::string &D : R.Outputs)
    OutPtrs.push_back(D.data());
  auto Start = std::chrono::steady_clock::now();
  if (auto E = (*M)->run(InPtrs, OutPtrs))
    return E;
  std::chrono::duration<double, std::micro> Took =
      std::chrono::steady_clock::now() - Start;
  R.RunUs = Took.count();
  for (size_t I = 0; I < Outs.size(); ++I)
    setOutputShape(Outs[I], R.Outputs[I], (*M)->outputShape(I));
  if (O.Build.Profile) {
    ProfileData P;
    // The build above loaded this target and accepted its clock.
    auto T = loadTarget(O.Build.Target);
    if (!T)
      return T.takeError();
    auto Counters = profileCounters(*T);
    if (!Counters)
      return Counters.takeError();
    P.Counters = *Counters;
    P.Steps = (*M)->profileSteps();
    if (auto E = decodeProfileTable((*M)->profileTable(), P))
      return E;
    P.Total = {static_cast<uint64_t>(*R.RunUs * 1000), 0};
    R.Profile = std::move(P);
  }
  R.ArenaBytes = (*M)->arenaBytes();
  R.WeightBytes = (*M)->weightBytes();
  return R;
}

llvm::Expected<RunResult> runOnBoard(const RunOptions &O,
                                     std::optional<std::string_view> Bytes,
                                     std::vector<RunnerTensor> &Ins,
                                     std::vector<RunnerTensor> &Outs,
                                     std::ostream &Log) {
  BuildOptions B = O.Build;
  B.Name = "model"; // the runner includes "model.h"
  auto CM = compileModel(B, Log, Bytes);
  if (!CM)
    return CM.takeError();
  Ins = runnerTensors(CM->G->inputs(), CM->Header.InputsOptional);
  Outs = runnerTensors(CM->G->outputs());
  auto In =
      O.Inputs.empty() ? randomInputs(Ins, O.Seed) : readInputs(O.Inputs, Ins);
  if (!In)
    return In.takeError();
  BoardRunOptions BO;
  BO.CC = O.CC;
  BO.KeepWork = O.KeepWork;
  BO.TimeoutSeconds = O.TimeoutSeconds;
  auto Board = runFirmware(*CM, *In, BO, Log);
  if (!Board)
    return Board.takeError();
  RunResult R;
  R.Inputs = std::move(*In);
  R.Outputs = std::move(Board->Outputs);
  for (size_t I = 0; I < Board->OutputShapes.size() && I < Outs.size(); ++I)
    setOutputShape(Outs[I], R.Outputs[I], Board->OutputShapes[I]);
  R.Instructions = Board->Instructions;
  R.Cycles = Board->Cycles;
  if (const auto &Prof = CM->Header.Profiled) {
    ProfileData P;
    P.Counters = Prof->Counters;
    P.Steps = CM->Code.ProfileSteps;
    if (!Board->ProfileTable)
      return makeError("the runner wrote no profile table");
    if (auto E = decodeProfileTable(*Board->ProfileTable, P))
      return E;
    P.Total = {Board->Cycles, Board->Instructions};
    R.Profile = std::move(P);
  }
  for (const ArenaPlan &A : CM->Plan.Arenas)
    R.ArenaBytes += A.Size;
  R.WeightBytes = CM->Blob.size();
  return R;
}

} // namespace

llvm::Error runRun(const RunOptions &O, std::ostream &Out, std::ostream &Log) {
  if (!O.Compare.empty() && O.CompareOrt)
    return usageError("--compare and --compare-ort: give one of them");
  auto T = loadTarget(O.Build.Target);
  if (!T)
    return usageError(llvm::toString(T.takeError()));
  bool Host = T->QemuCommand.empty();
  if (Host)
    if (auto E = runsHere(*T))
      return usageError(fmt::format(
          "{}; and targets/{}.toml has no [qemu] section to run it under",
          llvm::toString(std::move(E)), T->Name));

  auto Quant = quantizeForBuild(O.Build, Log);
  if (!Quant)
    return Quant.takeError();
  std::optional<std::string_view> Bytes;
  if (*Quant)
    Bytes = (*Quant)->Model;
  std::vector<RunnerTensor> Ins, Outs;
  auto R = Host ? runOnHost(O, Bytes, Ins, Outs, Log)
                : runOnBoard(O, Bytes, Ins, Outs, Log);
  if (!R)
    return R.takeError();
  if (!O.Compare.empty() && O.Compare.size() != Outs.size())
    return usageError(fmt::format("the model has {} output(s), {} --compare "
                                  "file(s) given: give one per output",
                                  Outs.size(), O.Compare.size()));

  nlohmann::ordered_json J;
  J["model"] = O.Build.Model;
  J["target"] = T->Name;
  J["outputs"] = nlohmann::ordered_json::array();
  if (!O.OutputDir.empty()) {
    std::error_code EC;
    fs::create_directories(O.OutputDir, EC);
    if (EC)
      return makeError("'{}': cannot create the directory: {}", O.OutputDir,
                       EC.message());
  }
  std::set<std::string> Used;
  for (size_t I = 0; I < Outs.size(); ++I) {
    const RunnerTensor &OT = Outs[I];
    Out << fmt::format("output {} '{}': {} {}\n", I, OT.Name, dtypeName(OT.Ty),
                       shapeOf(OT.Shape));
    printValues(Out, OT, R->Outputs[I]);
    nlohmann::ordered_json JO;
    JO["name"] = OT.Name;
    JO["dtype"] = dtypeName(OT.Ty);
    JO["shape"] = OT.Shape;
    if (!O.OutputDir.empty()) {
      std::string Path =
          (fs::path(O.OutputDir) / outputFileName(OT.Name, I, Used)).string();
      if (auto E = writeNpyFile(Path, OT.Ty, OT.Shape, R->Outputs[I]))
        return E;
      Out << "  written to " << Path << "\n";
      JO["file"] = Path;
    }
    J["outputs"].push_back(std::move(JO));
  }
  if (R->RunUs)
    Out << fmt::format("run: {:.1f} us wall time (host: no instruction or "
                       "cycle counts)\n",
                       *R->RunUs);
  else
    Out << fmt::format("run: {} instructions, {} cycles\n", *R->Instructions,
                       *R->Cycles);
  Out << fmt::format("memory: {} arena bytes, {} weight bytes\n", R->ArenaBytes,
                     R->WeightBytes);
  J["instructions"] = R->Instructions ? nlohmann::ordered_json(*R->Instructions)
                                      : nlohmann::ordered_json(nullptr);
  J["cycles"] = R->Cycles ? nlohmann::ordered_json(*R->Cycles)
                          : nlohmann::ordered_json(nullptr);
  J["run_us"] = R->RunUs ? nlohmann::ordered_json(*R->RunUs)
                         : nlohmann::ordered_json(nullptr);
  J["arena_bytes"] = R->ArenaBytes;
  J["weight_bytes"] = R->WeightBytes;
  if (R->Profile) {
    R->Profile->Model = O.Build.Model;
    R->Profile->Target = T->Name;
    Out << profileText(*R->Profile);
    J["profile"] = profileJson(*R->Profile);
  }

  std::vector<std::string> Bad;
  auto Refs = references(O, Bytes, Ins, Outs, *R, Log);
  if (!Refs)
    return Refs.takeError();
  if (!Refs->Labels.empty()) {
    J["compare"] = nlohmann::ordered_json::array();
    for (size_t I = 0; I < Outs.size(); ++I) {
      auto C =
          O.CompareOrt
              ? Comparison(compareValues(
                    Outs[I], R->Outputs[I], DType::F32,
                    reinterpret_cast<const uint8_t *>(Refs->OrtData[I].data()),
                    O.Atol, O.Rtol))
              : compareOutput(Outs[I], R->Outputs[I], O.Compare[I], O.Atol,
                              O.Rtol);
      if (!C)
        return C.takeError();
      Out << fmt::format("compare output {} '{}' with {}: max abs error "
                         "{:.3g}, max rel error {:.3g}: {}\n",
                         I, Outs[I].Name, Refs->Labels[I], C->MaxAbs, C->MaxRel,
                         C->Ok ? "ok" : "DIFFERENT");
      J["compare"].push_back({{"reference", Refs->Labels[I]},
                              {"max_abs", finiteOrNull(C->MaxAbs)},
                              {"max_rel", finiteOrNull(C->MaxRel)},
                              {"ok", C->Ok}});
      if (!C->Ok)
        Bad.push_back(fmt::format("'{}'", Outs[I].Name));
    }
  }
  if (!O.Json.empty()) {
    std::string Text =
        J.dump(2, ' ', false,
               nlohmann::ordered_json::error_handler_t::replace) +
        "\n";
    if (O.Json == "-") {
      std::cout << Text << std::flush;
    } else {
      std::ofstream F(O.Json, std::ios::binary);
      F << Text;
      F.close();
      if (!F)
        return makeError("'{}': cannot write the JSON summary", O.Json);
    }
  }
  if (!Bad.empty())
    return makeError("output(s) {} differ from the reference beyond atol {} "
                     "+ rtol {} * |ref|",
                     fmt::join(Bad, ", "), O.Atol, O.Rtol);
  return llvm::Error::success();
}

} // namespace cuvil
