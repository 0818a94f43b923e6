// Locating a model: the Hugging Face directory layout with either tokenizer naming, the HF cache
// layout with symlinked blobs, the resolution order (--model, $GENREPRO_MODEL, HF cache, tiny
// fixture), and the one-line errors for missing pieces.
#include "model/model_files.hpp"

#include <thread>

#include <gtest/gtest.h>

#include "util/errors.hpp"
#include "model/fixture_model.hpp"
#include "unit/model/model_test_util.hpp"

namespace genrepro {
namespace {

namespace fs = std::filesystem;
using test::EnvGuard;
using test::ScratchDir;

// Four placeholder files: locating checks presence, not content.
void make_hf_dir(const fs::path& dir, const char* vocab = "vocab.json", const char* merges = "merges.txt") {
  for (const char* name : {"config.json", "model.safetensors", vocab, merges}) test::write_bytes(dir / name, name);
}

// hub/models--gpt2/snapshots/<rev>/<file> -> ../../blobs/<hash-like name>, as huggingface_hub makes it.
fs::path make_hf_cache_snapshot(const fs::path& hub, const std::string& rev) {
  const fs::path repo = hub / "models--gpt2";
  const fs::path snap = repo / "snapshots" / rev;
  fs::create_directories(snap);
  fs::create_directories(repo / "blobs");
  for (const char* name : {"config.json", "model.safetensors", "vocab.json", "merges.txt"}) {
    const std::string blob = rev + "-" + name + "-blob";
    test::write_bytes(repo / "blobs" / blob, name);
    fs::create_symlink(fs::path("../../blobs") / blob, snap / name);
  }
  return snap;
}

TEST(ModelFiles, HuggingFaceLayout) {
  ScratchDir dir;
  make_hf_dir(dir.path());
  const ModelFiles m = locate_model_dir(dir.path().string(), ModelSource::flag);
  EXPECT_EQ(m.dir, dir.path().string());
  EXPECT_EQ(m.config, dir / "config.json");
  EXPECT_EQ(m.weights, dir / "model.safetensors");
  EXPECT_EQ(m.vocab, dir / "vocab.json");
  EXPECT_EQ(m.merges, dir / "merges.txt");
  EXPECT_EQ(m.source, ModelSource::flag);
  EXPECT_EQ(m.source_note, "model: " + dir.path().string() + " (from --model)");
}

TEST(ModelFiles, OpenAiTokenizerNames) {
  ScratchDir dir;
  make_hf_dir(dir.path(), "encoder.json", "vocab.bpe");
  const ModelFiles m = locate_model_dir(dir.path().string(), ModelSource::env);
  EXPECT_EQ(m.vocab, dir / "encoder.json");
  EXPECT_EQ(m.merges, dir / "vocab.bpe");
  EXPECT_EQ(m.source_note, "model: " + dir.path().string() + " (from $GENREPRO_MODEL)");
  // Both present: the Hugging Face names win.
  make_hf_dir(dir.path());
  EXPECT_EQ(locate_model_dir(dir.path().string(), ModelSource::env).vocab, dir / "vocab.json");
}

TEST(ModelFiles, RelativePathBecomesAbsolute) {
  ScratchDir dir;
  make_hf_dir(dir.path() / "m");
  const fs::path old = fs::current_path();
  fs::current_path(dir.path());
  const ModelFiles m = locate_model_dir("m", ModelSource::flag);
  fs::current_path(old);
  EXPECT_EQ(m.dir, dir / "m");
}

TEST(ModelFiles, MissingPiecesAreNamedWithAFix) {
  ScratchDir dir;
  make_hf_dir(dir.path());
  fs::remove(dir.path() / "merges.txt");
  EXPECT_THROW_MSG(locate_model_dir(dir.path().string(), ModelSource::flag), ModelFileError,
                   "model directory " + dir.path().string() +
                       " (from --model): missing merges.txt (or vocab.bpe); a model directory holds config.json");
  EXPECT_THROW_MSG(locate_model_dir(dir.path().string(), ModelSource::flag), ModelFileError,
                   "`genrepro fixture --out DIR`");
  fs::remove(dir.path() / "vocab.json");
  fs::remove(dir.path() / "config.json");
  EXPECT_THROW_MSG(locate_model_dir(dir.path().string(), ModelSource::flag), ModelFileError,
                   ": missing config.json, vocab.json (or encoder.json), merges.txt (or vocab.bpe);");
  ScratchDir empty;
  EXPECT_THROW_MSG(locate_model_dir(empty.path().string(), ModelSource::flag), ModelFileError,
                   ": missing config.json, model.safetensors, vocab.json (or encoder.json), merges.txt (or vocab.bpe);");
}

TEST(ModelFiles, PickleOnlyCheckpointIsExplained) {
  ScratchDir dir;
  make_hf_dir(dir.path());
  fs::remove(dir.path() / "model.safetensors");
  test::write_bytes(dir / "pytorch_model.bin", "pickle");
  EXPECT_THROW_MSG(locate_model_dir(dir.path().string(), ModelSource::flag), ModelFileError,
                   ": missing model.safetensors (pytorch_model.bin is not read: genrepro loads only safetensors);");
}

// A directory where a file should be is named as such, not reported as plainly missing.
TEST(ModelFiles, DirectoryInPlaceOfAFileIsReported) {
  ScratchDir dir;
  make_hf_dir(dir.path());
  fs::remove(dir.path() / "config.json");
  fs::create_directory(dir.path() / "config.json");
  EXPECT_THROW_MSG(locate_model_dir(dir.path().string(), ModelSource::flag), ModelFileError,
                   ": missing config.json [config.json is a directory];");
}

TEST(ModelFiles, NotADirectory) {
  ScratchDir dir;
  EXPECT_THROW_MSG(locate_model_dir(dir / "nope", ModelSource::flag), ModelFileError,
                   "model directory " + dir / "nope" + " (from --model): does not exist;");
  test::write_bytes(dir / "file", "x");
  EXPECT_THROW_MSG(locate_model_dir(dir / "file", ModelSource::env), ModelFileError,
                   "(from $GENREPRO_MODEL): is not a directory;");
  EXPECT_THROW_MSG(locate_model_dir("", ModelSource::flag), ModelFileError, "model directory is an empty path");
}

TEST(ModelFiles, HfCacheLayoutWithSymlinkedBlobs) {
  ScratchDir dir;
  const fs::path hub = dir.path() / "hub";
  const fs::path snap = make_hf_cache_snapshot(hub, "607a30d783dfa663caf39e06633721c8d4cfcd7e");
  // The hub root, the models--gpt2 folder, the HF_HOME above hub/, and the snapshot itself all work.
  for (const fs::path& p : {hub, hub / "models--gpt2", dir.path(), snap}) {
    SCOPED_TRACE(p.string());
    const ModelFiles m = locate_model_dir(p.string(), ModelSource::flag);
    EXPECT_EQ(m.dir, snap.string());
    EXPECT_EQ(m.weights, (snap / "model.safetensors").string());
    EXPECT_EQ(test::read_bytes(m.weights), "model.safetensors");  // through the symlink into blobs/
  }
  EXPECT_NE(locate_model_dir(hub.string(), ModelSource::flag).source_note.find("the only snapshot 607a30d"),
            std::string::npos);
}

TEST(ModelFiles, HfCachePicksRefsMainElseNewest) {
  ScratchDir dir;
  const fs::path hub = dir.path();
  const fs::path old_snap = make_hf_cache_snapshot(hub, "aaaa-old");
  const fs::path new_snap = make_hf_cache_snapshot(hub, "bbbb-new");
  fs::last_write_time(old_snap, fs::file_time_type::clock::now() + std::chrono::hours(1));
  fs::last_write_time(new_snap, fs::file_time_type::clock::now() + std::chrono::hours(2));
  // No refs/main: the most recently modified snapshot.
  ModelFiles m = locate_model_dir(hub.string(), ModelSource::flag);
  EXPECT_EQ(m.dir, new_snap.string());
  EXPECT_NE(m.source_note.find("the newest of 2 snapshots, bbbb-new"), std::string::npos) << m.source_note;
  // refs/main names the older one (with the trailing newline huggingface_hub does not write, to be safe).
  test::write_bytes(hub / "models--gpt2" / "refs" / "main", "aaaa-old\n");
  m = locate_model_dir(hub.string(), ModelSource::flag);
  EXPECT_EQ(m.dir, old_snap.string());
  EXPECT_NE(m.source_note.find("revision aaaa-old from refs/main"), std::string::npos) << m.source_note;
  // refs/main naming a snapshot that is not there falls back to the newest.
  test::write_bytes(hub / "models--gpt2" / "refs" / "main", "cccc-gone");
  EXPECT_EQ(locate_model_dir(hub.string(), ModelSource::flag).dir, new_snap.string());
}

TEST(ModelFiles, HfCacheBrokenSymlinkIsReported) {
  ScratchDir dir;
  const fs::path snap = make_hf_cache_snapshot(dir.path(), "rev1");
  fs::remove(dir.path() / "models--gpt2" / "blobs" / "rev1-model.safetensors-blob");
  EXPECT_THROW_MSG(locate_model_dir(dir.path().string(), ModelSource::flag), ModelFileError,
                   " -> snapshot " + snap.string() +
                       ": missing model.safetensors [model.safetensors is a broken symlink]");
}

// ---- resolve_model: the order of sources ----

// Clears every variable resolve_model reads, pointing HOME at an empty directory, so that the
// machine's own caches never leak into a test.
struct CleanEnv {
  explicit CleanEnv(const ScratchDir& home)
      : model("GENREPRO_MODEL", std::nullopt),
        hub("HF_HUB_CACHE", std::nullopt),
        hf_home("HF_HOME", std::nullopt),
        home_var("HOME", home.path().string()),
        cache("GENREPRO_CACHE_DIR", std::nullopt),
        xdg("XDG_CACHE_HOME", std::nullopt) {}
  EnvGuard model, hub, hf_home, home_var, cache, xdg;
};

TEST(ResolveModel, FlagBeatsEnvBeatsCache) {
  ScratchDir home, flag_dir, env_dir, hub;
  CleanEnv clean(home);
  make_hf_dir(flag_dir.path());
  make_hf_dir(env_dir.path());
  make_hf_cache_snapshot(hub.path(), "r1");
  EnvGuard hub_env("HF_HUB_CACHE", hub.path().string());
  EnvGuard env("GENREPRO_MODEL", env_dir.path().string());

  ModelResolveOptions opts;
  opts.flag = flag_dir.path().string();
  EXPECT_EQ(resolve_model(opts).source, ModelSource::flag);
  EXPECT_EQ(resolve_model(opts).dir, flag_dir.path().string());
  opts.flag.reset();
  EXPECT_EQ(resolve_model(opts).source, ModelSource::env);
  EXPECT_EQ(resolve_model(opts).dir, env_dir.path().string());
  {
    EnvGuard no_env("GENREPRO_MODEL", std::nullopt);
    const ModelFiles m = resolve_model(opts);
    EXPECT_EQ(m.source, ModelSource::hf_cache);
    EXPECT_EQ(m.dir, (hub.path() / "models--gpt2" / "snapshots" / "r1").string());
    EXPECT_NE(m.source_note.find("[$HF_HUB_CACHE]"), std::string::npos) << m.source_note;
  }
}

TEST(ResolveModel, HfHomeAndUserCache) {
  ScratchDir home, hf_home;
  CleanEnv clean(home);
  make_hf_cache_snapshot(home.path() / ".cache" / "huggingface" / "hub", "home-rev");
  ModelFiles m = resolve_model({});
  EXPECT_EQ(m.source, ModelSource::hf_cache);
  EXPECT_NE(m.source_note.find("[~/.cache/huggingface/hub]"), std::string::npos) << m.source_note;
  make_hf_cache_snapshot(hf_home.path() / "hub", "hf-home-rev");
  EnvGuard env("HF_HOME", hf_home.path().string());
  m = resolve_model({});
  EXPECT_EQ(m.dir, (hf_home.path() / "hub" / "models--gpt2" / "snapshots" / "hf-home-rev").string());
  EXPECT_NE(m.source_note.find("[$HF_HOME/hub]"), std::string::npos) << m.source_note;
}

// huggingface_hub's rule: only the first of $HF_HUB_CACHE, $HF_HOME/hub,
// $XDG_CACHE_HOME/huggingface/hub, ~/.cache/huggingface/hub that is set is the cache. One set
// without gpt2 does not fall through to ~/.cache's gpt2: the fixture is used (and said) instead.
TEST(ResolveModel, OnlyTheFirstHfCacheThatIsSetIsSearched) {
  ScratchDir home, empty_hub, hf_home, xdg;
  CleanEnv clean(home);
  make_hf_cache_snapshot(home.path() / ".cache" / "huggingface" / "hub", "home-rev");
  ModelResolveOptions real;
  real.require_real_model = true;  // not found is then an error naming the cache searched
  ASSERT_EQ(resolve_model(real).source, ModelSource::hf_cache);  // the control: found in ~/.cache
  {
    EnvGuard hub_env("HF_HUB_CACHE", empty_hub.path().string());
    EXPECT_THROW_MSG(resolve_model(real), ModelFileError, "no gpt2 in $HF_HUB_CACHE)");
  }
  {
    EnvGuard home_env("HF_HOME", hf_home.path().string());
    EXPECT_THROW_MSG(resolve_model(real), ModelFileError, "no gpt2 in $HF_HOME/hub)");
  }
  EnvGuard xdg_env("XDG_CACHE_HOME", xdg.path().string());
  EXPECT_THROW_MSG(resolve_model(real), ModelFileError, "no gpt2 in $XDG_CACHE_HOME/huggingface/hub)");
  make_hf_cache_snapshot(xdg.path() / "huggingface" / "hub", "xdg-rev");
  const ModelFiles m = resolve_model(real);
  EXPECT_EQ(m.dir, (xdg.path() / "huggingface" / "hub" / "models--gpt2" / "snapshots" / "xdg-rev").string());
  EXPECT_NE(m.source_note.find("[$XDG_CACHE_HOME/huggingface/hub]"), std::string::npos) << m.source_note;
}

TEST(ResolveModel, ErrorsFromFlagAndEnvAreNotSwallowed) {
  ScratchDir home, bad;
  CleanEnv clean(home);
  ModelResolveOptions opts;
  opts.flag = bad / "missing";
  EXPECT_THROW_MSG(resolve_model(opts), ModelFileError, "(from --model): does not exist");
  EnvGuard env("GENREPRO_MODEL", bad.path().string());
  EXPECT_THROW_MSG(resolve_model({}), ModelFileError, "(from $GENREPRO_MODEL): missing config.json");
}

TEST(ResolveModel, FallsBackToTheTinyFixtureMadeOnFirstUse) {
  ScratchDir home, cache;
  CleanEnv clean(home);
  ModelResolveOptions opts;
  opts.cache_dir = cache.path().string();
  opts.tokenizer_dir = GENREPRO_TEST_TOKENIZER_DIR;
  const ModelFiles first = resolve_model(opts);
  EXPECT_EQ(first.source, ModelSource::fixture);
  EXPECT_EQ(first.dir, (cache.path() / "fixtures" / "tiny").string());
  // One short line that says what it is and that its outputs mean nothing.
  EXPECT_EQ(first.source_note, "model: the tiny random-weight fixture (" + first.dir +
                                   "): no model given or found, so outputs are noise by design; pass --model DIR "
                                   "for real weights");
  // No temporary directory is left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(cache.path() / "fixtures"), {}), 1);

  const ModelFiles second = resolve_model(opts);
  EXPECT_EQ(second.dir, first.dir);
  EXPECT_EQ(second.source_note, first.source_note);
}

TEST(ResolveModel, IncompleteGpt2SnapshotIsAnErrorNotAFallback) {
  ScratchDir home, cache, hub;
  CleanEnv clean(home);
  // Only config.json, as after a partial download: found, so it must be complete.
  fs::create_directories(hub.path() / "models--gpt2" / "snapshots" / "partial");
  test::write_bytes(hub.path() / "models--gpt2" / "snapshots" / "partial" / "config.json", "{}");
  EnvGuard hub_env("HF_HUB_CACHE", hub.path().string());
  ModelResolveOptions opts;
  opts.cache_dir = cache.path().string();
  opts.tokenizer_dir = GENREPRO_TEST_TOKENIZER_DIR;
  EXPECT_THROW_MSG(resolve_model(opts), ModelFileError, "missing model.safetensors");
  EXPECT_THROW_MSG(resolve_model(opts), ModelFileError,
                   "[the gpt2 snapshot found in $HF_HUB_CACHE is incomplete or damaged: complete the download, "
                   "remove it, or pass --model DIR]");
  EXPECT_FALSE(fs::exists(cache.path() / "fixtures")) << "no fixture may be made in its place";
  // A models--gpt2 folder without any snapshot is found too, and refused the same way.
  fs::remove_all(hub.path() / "models--gpt2" / "snapshots");
  EXPECT_THROW_MSG(resolve_model(opts), ModelFileError, "the gpt2 snapshot found in $HF_HUB_CACHE");
}

TEST(ResolveModel, ModelGpt2MeansTheHuggingFaceCacheOnly) {
  ScratchDir home, hub, workdir;
  CleanEnv clean(home);
  ModelResolveOptions opts;
  opts.flag = "gpt2";
  // Not a directory named gpt2 in the working directory, and never the fixture.
  EXPECT_THROW_MSG(resolve_model(opts), ModelFileError,
                   "--model gpt2: no gpt2 snapshot in the Hugging Face cache (~/.cache/huggingface/hub); "
                   "README.md, 'The model', says how to download GPT-2, or pass --model DIR");
  make_hf_cache_snapshot(hub.path(), "r1");
  EnvGuard hub_env("HF_HUB_CACHE", hub.path().string());
  const ModelFiles m = resolve_model(opts);
  EXPECT_EQ(m.source, ModelSource::hf_cache);
  EXPECT_EQ(m.dir, (hub.path() / "models--gpt2" / "snapshots" / "r1").string());
}

TEST(ResolveModel, RequireRealModelRefusesTheFixture) {
  ScratchDir home, cache, hub;
  CleanEnv clean(home);
  ModelResolveOptions opts;
  opts.cache_dir = cache.path().string();
  opts.tokenizer_dir = GENREPRO_TEST_TOKENIZER_DIR;
  opts.require_real_model = true;
  EXPECT_THROW_MSG(resolve_model(opts), ModelFileError,
                   "--require-real-model: no model given or found (no --model, no $GENREPRO_MODEL, no gpt2 in "
                   "~/.cache/huggingface/hub), and the random-weight fixture is not allowed");
  EXPECT_FALSE(fs::exists(cache.path() / "fixtures"));
  make_hf_cache_snapshot(hub.path(), "r1");
  EnvGuard hub_env("HF_HUB_CACHE", hub.path().string());
  EXPECT_EQ(resolve_model(opts).source, ModelSource::hf_cache);
}

TEST(ResolveModel, DamagedCachedFixtureSaysHowToRepairIt) {
  ScratchDir home, cache;
  CleanEnv clean(home);
  ModelResolveOptions opts;
  opts.cache_dir = cache.path().string();
  opts.tokenizer_dir = GENREPRO_TEST_TOKENIZER_DIR;
  const ModelFiles m = resolve_model(opts);
  fs::remove(fs::path(m.dir) / "merges.txt");
  EXPECT_THROW_MSG(resolve_model(opts), ModelFileError,
                   "(the tiny fixture): missing merges.txt (or vocab.bpe)");
  EXPECT_THROW_MSG(resolve_model(opts), ModelFileError,
                   "[the cached fixture is damaged: remove " + m.dir + " and it will be made again]");
}

TEST(ResolveModel, ConcurrentFirstUseNeverSeesHalfAModel) {
  ScratchDir home, cache;
  CleanEnv clean(home);
  ModelResolveOptions opts;
  opts.cache_dir = cache.path().string();
  opts.tokenizer_dir = GENREPRO_TEST_TOKENIZER_DIR;
  constexpr int kRacers = 3;
  std::vector<std::string> dirs(kRacers), errors(kRacers);
  std::vector<std::thread> threads;
  for (int i = 0; i < kRacers; ++i)
    threads.emplace_back([&, i] {
      try {
        dirs[i] = resolve_model(opts).dir;
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < kRacers; ++i) {
    EXPECT_EQ(errors[i], "");
    EXPECT_EQ(dirs[i], (cache.path() / "fixtures" / "tiny").string());
  }
  const fs::path tiny = cache.path() / "fixtures" / "tiny";
  EXPECT_EQ(std::distance(fs::directory_iterator(tiny), {}), 4);  // exactly the four files, no temporaries
  EXPECT_EQ(std::distance(fs::directory_iterator(cache.path() / "fixtures"), {}), 1);
}

TEST(ResolveModel, DefaultDirectories) {
  ScratchDir home;
  CleanEnv clean(home);
  EXPECT_EQ(default_cache_dir(), (home.path() / ".cache" / "genrepro").string());
  {
    EnvGuard xdg("XDG_CACHE_HOME", "/x/cache");
    EXPECT_EQ(default_cache_dir(), "/x/cache/genrepro");
    EnvGuard own("GENREPRO_CACHE_DIR", "/y");
    EXPECT_EQ(default_cache_dir(), "/y");
  }
  {
    EnvGuard no_home("HOME", std::nullopt);
    EXPECT_THROW_MSG(default_cache_dir(), UsageError, "set GENREPRO_CACHE_DIR or pass --model DIR");
  }
  EnvGuard tok("GENREPRO_TOKENIZER_DIR", "/tok");
  EXPECT_EQ(default_tokenizer_dir(), "/tok");
  EnvGuard no_tok("GENREPRO_TOKENIZER_DIR", std::nullopt);
  EXPECT_EQ(default_tokenizer_dir(), std::string(GENREPRO_TEST_TOKENIZER_DIR));
}

}  // namespace
}  // namespace genrepro
