#include "cli/numerics_flags.hpp"

#include "util/build_features.hpp"
#include "util/errors.hpp"

namespace genrepro::cli {

void add_numerics_flags(CLI::App& verb, NumericsFlags& flags) {
  verb.add_option("--numerics", flags.mode,
                  "strict (default: genrepro's own kernels, one fixed order of float operations: the same\n"
                  "bits on every CPU, thread count and batch, and the fastest here; no probe) | reference\n"
                  "(libtorch and the BLAS, every run's bits as computed alone; the default when --cpu-kernels\n"
                  "or --allow-inexact-batch is given) | tiled (linear layers in fixed tiles the probe proves\n"
                  "batch-invariant); recorded in the evidence (docs/numerics.md)")
      ->capture_default_str()
      ->each([&flags](const std::string&) { flags.mode_given = true; });
  verb.add_option("--batch", flags.batch,
                  "Runs decoded together in one forward pass [default: strict, up to 64 (any batch gives\n"
                  "the same bits); reference, the largest batch the start-up probe proves keeps every run's\n"
                  "bits; tiled, the tile size]");
  verb.add_flag("--allow-inexact-batch", flags.allow_inexact_batch,
                "reference (selected by this flag without --numerics): accept a --batch beyond the\n"
                "probe's proof (bits may then differ from a lone run's; the evidence records it)");
  CLI::Option* kernels = add_cpu_kernels_flag(verb, flags.cpu_kernels);
  kernels->description("The library kernels of --numerics reference and tiled (given without --numerics, it\n"
                       "selects reference): " + kernels->get_description());
  kernels->each([&flags](const std::string&) { flags.cpu_kernels_given = true; });
}

CLI::Option* add_cpu_kernels_flag(CLI::App& verb, std::string& cpu_kernels) {
  return verb.add_option("--cpu-kernels", cpu_kernels,
                  "portable (default: OpenBLAS's Haswell kernels and ATen's AVX2, set before libtorch\n"
                  "loads and read back after: the same bits on every x86-64 CPU with AVX2 and FMA; refused\n"
                  "where the machine or BLAS cannot honour it) | native (the libraries choose by CPU: bits\n"
                  "of this CPU only); recorded in the evidence (docs/numerics.md)")
      ->capture_default_str();
}

CpuKernels cpu_kernels_from(const std::string& text) {
  const std::optional<CpuKernels> kernels = parse_cpu_kernels(text);
  if (!kernels) throw UsageError("--cpu-kernels " + text + ": allowed: portable, native");
  return *kernels;
}

NumericsRequest numerics_request_from(const NumericsFlags& flags) {
  NumericsRequest r;
  // The library kernels' flags ask for the library numerics; strict has neither knob.
  const bool library_flags = flags.cpu_kernels_given || flags.allow_inexact_batch;
  const std::optional<NumericsMode> mode =
      !flags.mode_given && library_flags ? NumericsMode::reference : parse_numerics_mode(flags.mode);
  if (!mode) throw UsageError("--numerics " + flags.mode + ": allowed: reference, tiled, strict");
  r.mode = *mode;
  if (!kBuiltWithLibtorch && r.mode != NumericsMode::strict)
    throw UsageError((flags.mode_given ? "--numerics " + flags.mode
                                       : std::string(flags.cpu_kernels_given ? "--cpu-kernels" : "--allow-inexact-batch") +
                                             " (reference numerics)") +
                     ": " + kLibtorchNeeded);
  if (flags.batch && (*flags.batch < 1 || *flags.batch > kMaxBatch))
    throw UsageError("--batch " + std::to_string(*flags.batch) + ": allowed: a whole number from 1 to " +
                     std::to_string(kMaxBatch));
  r.batch = flags.batch;
  if (flags.allow_inexact_batch && r.mode != NumericsMode::reference)
    throw UsageError("--allow-inexact-batch: only for --numerics reference (" + flags.mode +
                     " batches are exact by construction)");
  r.allow_inexact_batch = flags.allow_inexact_batch;
  r.cpu_kernels = cpu_kernels_from(flags.cpu_kernels);
  if (flags.cpu_kernels_given && r.mode == NumericsMode::strict)
    throw UsageError("--cpu-kernels " + flags.cpu_kernels +
                     ": not used by --numerics strict (its own kernels give the same bits on every CPU; "
                     "GENREPRO_STRICT_ISA only chooses their vector code)");
  // Nothing of the libraries decides a strict bit, so nothing is pinned: portable's pins would
  // refuse the CPUs strict exists for (no AVX2, ARM).
  if (r.mode == NumericsMode::strict) r.cpu_kernels = CpuKernels::native;
  return r;
}

}  // namespace genrepro::cli
