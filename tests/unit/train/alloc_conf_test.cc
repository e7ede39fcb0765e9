#include "agents/train/alloc_conf.h"

#include <gtest/gtest.h>

#include <string>

namespace gpuctl::train {
namespace {

std::string ErrorOf(std::string_view conf) {
  Status s = ValidateAllocConf(conf);
  EXPECT_FALSE(s.ok()) << "accepted: " << conf;
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << conf;
  return s.message();
}

TEST(ValidateAllocConf, AcceptsWhatPyTorchAccepts) {
  for (const char* good : {
           "expandable_segments:True",
           "expandable_segments:False",
           "max_split_size_mb:20",
           "max_split_size_mb:512",
           "max_non_split_rounding_mb:64",
           "garbage_collection_threshold:0.6",
           "garbage_collection_threshold:1e-1",
           "roundup_power2_divisions:4",
           "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]",
           "roundup_power2_divisions:[>:0]",
           "roundup_power2_divisions:[]",
           "backend:native",
           "backend:cudaMallocAsync",
           "release_lock_on_cudamalloc:True",
           "pinned_use_cuda_host_register:True,pinned_num_register_threads:8",
           "pinned_num_register_threads:128",
           "pinned_use_background_threads:False",
           "pinned_reserve_segment_size_mb:1024",
           "per_process_memory_fraction:0",
           "per_process_memory_fraction:1",
           "per_process_memory_fraction:0.75",
           "graph_capture_record_stream_reuse:True",
           "release_lock_on_hipmalloc:True",
           "expandable_segments:True,max_split_size_mb:512,garbage_collection_threshold:0.8",
           // whitespace is dropped wherever it stands, as ConfigTokenizer does
           " expandable_segments : True , max_split_size_mb:\t512 ",
           "roundup_power2_divisions: [ 256 : 1 , > : 4 ]",
           // a trailing comma and a repeated key are accepted by PyTorch too
           "expandable_segments:True,",
           "expandable_segments:True,expandable_segments:False",
       }) {
    Status s = ValidateAllocConf(good);
    EXPECT_TRUE(s.ok()) << good << " -> " << s.message();
  }
}

TEST(ValidateAllocConf, BoolSaysWhatAndHow) {
  EXPECT_EQ(ErrorOf("expandable_segments:maybe"),
            "expandable_segments must be True or False, got 'maybe' "
            "(e.g. --alloc-conf expandable_segments:True)");
  EXPECT_EQ(ErrorOf("expandable_segments:true"),
            "expandable_segments must be True or False, got 'true'; the capital letter matters "
            "(e.g. --alloc-conf expandable_segments:True)");
  EXPECT_EQ(ErrorOf("pinned_use_background_threads:1"),
            "pinned_use_background_threads must be True or False, got '1' "
            "(e.g. --alloc-conf pinned_use_background_threads:True)");
}

TEST(ValidateAllocConf, EmptyIsAnError) {
  EXPECT_EQ(ErrorOf(""),
            "the allocator config is empty: give key:value pairs "
            "(e.g. --alloc-conf expandable_segments:True) or leave the option out");
  EXPECT_EQ(ErrorOf("  \t "), ErrorOf(""));
}

TEST(ValidateAllocConf, UnknownKeyListsTheKnownOnes) {
  std::string message = ErrorOf("expandable_segment:True");
  EXPECT_EQ(message.rfind("unknown allocator setting 'expandable_segment' "
                          "(did you mean 'expandable_segments'?); known keys are backend, "
                          "expandable_segments, garbage_collection_threshold, ",
                          0),
            0u)
      << message;
  EXPECT_NE(message.find("roundup_power2_divisions (e.g. --alloc-conf expandable_segments:True)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("max_split_size_mb, per_process_memory_fraction"), std::string::npos);
  // Nothing close: no suggestion.
  EXPECT_EQ(ErrorOf("colour:blue").find("did you mean"), std::string::npos);
  // Keys are case-sensitive in PyTorch.
  EXPECT_NE(ErrorOf("Expandable_Segments:True").find("unknown allocator setting"), std::string::npos);
}

TEST(ValidateAllocConf, NumbersAndTheirRanges) {
  EXPECT_EQ(ErrorOf("max_split_size_mb:19"),
            "max_split_size_mb must be a whole number of MiB, at least 20, got '19' "
            "(e.g. --alloc-conf max_split_size_mb:512)");
  EXPECT_NE(ErrorOf("max_split_size_mb:512MB").find("got '512MB'"), std::string::npos);
  EXPECT_NE(ErrorOf("max_split_size_mb:-1").find("got '-1'"), std::string::npos);
  EXPECT_NE(ErrorOf("max_split_size_mb:20.5").find("whole number"), std::string::npos);
  EXPECT_NE(ErrorOf("max_non_split_rounding_mb:10").find("at least 20"), std::string::npos);
  EXPECT_EQ(ErrorOf("garbage_collection_threshold:1"),
            "garbage_collection_threshold must be a number strictly between 0 and 1, got '1' "
            "(e.g. --alloc-conf garbage_collection_threshold:0.6)");
  EXPECT_NE(ErrorOf("garbage_collection_threshold:0").find("strictly between"), std::string::npos);
  EXPECT_NE(ErrorOf("garbage_collection_threshold:nan").find("got 'nan'"), std::string::npos);
  EXPECT_NE(ErrorOf("per_process_memory_fraction:1.5").find("from 0 to 1"), std::string::npos);
  EXPECT_EQ(ErrorOf("pinned_num_register_threads:3"),
            "pinned_num_register_threads must be a power of two no larger than 128, got '3' "
            "(e.g. --alloc-conf pinned_num_register_threads:8)");
  EXPECT_NE(ErrorOf("pinned_num_register_threads:256").find("no larger than 128"), std::string::npos);
  EXPECT_NE(ErrorOf("pinned_num_register_threads:0").find("power of two"), std::string::npos);
  EXPECT_NE(ErrorOf("pinned_reserve_segment_size_mb:0").find("above 0"), std::string::npos);
}

TEST(ValidateAllocConf, Backend) {
  EXPECT_EQ(ErrorOf("backend:cudamallocasync"),
            "backend must be native or cudaMallocAsync, got 'cudamallocasync' "
            "(e.g. --alloc-conf backend:cudaMallocAsync)");
}

TEST(ValidateAllocConf, RoundupDivisions) {
  EXPECT_EQ(ErrorOf("roundup_power2_divisions:3"),
            "roundup_power2_divisions must be a power of two or a list of size:divisions pairs, "
            "got '3' (e.g. --alloc-conf roundup_power2_divisions:[256:1,512:2,>:4])");
  EXPECT_EQ(ErrorOf("roundup_power2_divisions:[300:1]"),
            "roundup_power2_divisions: each size must be a power of two (MiB) or '>', got '300' "
            "(e.g. --alloc-conf roundup_power2_divisions:[256:1,512:2,>:4])");
  EXPECT_EQ(ErrorOf("roundup_power2_divisions:[256:3]"),
            "roundup_power2_divisions: divisions for size '256' must be a power of two or 0, "
            "got '3' (e.g. --alloc-conf roundup_power2_divisions:[256:1,512:2,>:4])");
  EXPECT_NE(ErrorOf("roundup_power2_divisions:[256:1,512:2").find("no closing ']'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("roundup_power2_divisions:[256]").find("expected size:divisions"),
            std::string::npos);
  EXPECT_EQ(ErrorOf("roundup_power2_divisions:[256:1:2]"),
            "roundup_power2_divisions: expected ',' or ']' after '256:1', got ':' "
            "(e.g. --alloc-conf roundup_power2_divisions:[256:1,512:2,>:4])");
  // Blanks are dropped inside tokens too, as ConfigTokenizer does: "1 512" is "1512".
  EXPECT_NE(ErrorOf("roundup_power2_divisions:[256:1 512:2]").find("got '1512'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("expandable_segments:[True]").find("a single value, not a list"),
            std::string::npos);
}

TEST(ValidateAllocConf, Structure) {
  EXPECT_EQ(ErrorOf("expandable_segments"),
            "expected ':' and a value after 'expandable_segments' "
            "(e.g. --alloc-conf expandable_segments:True)");
  EXPECT_EQ(ErrorOf("expandable_segments=True").find("unknown allocator setting"), 0u);
  EXPECT_EQ(ErrorOf("expandable_segments:"),
            "expandable_segments needs a value after ':' "
            "(e.g. --alloc-conf expandable_segments:True)");
  EXPECT_NE(ErrorOf("expandable_segments:,max_split_size_mb:512").find("needs a value"),
            std::string::npos);
  EXPECT_EQ(ErrorOf("expandable_segments:True:False"),
            "expected ',' after the value of expandable_segments, got ':' "
            "(e.g. --alloc-conf expandable_segments:True)");
  EXPECT_NE(ErrorOf(",expandable_segments:True").find("expected a setting name, got ','"),
            std::string::npos);
  EXPECT_NE(ErrorOf("expandable_segments:True,,max_split_size_mb:512")
                .find("separate key:value pairs with single commas"),
            std::string::npos);
  // An error in a later pair is still found.
  EXPECT_NE(ErrorOf("expandable_segments:True,max_split_size_mb:2").find("got '2'"),
            std::string::npos);
}

TEST(TokenizeAllocConf, PunctuationAloneBlanksDropped) {
  EXPECT_EQ(TokenizeAllocConf(" max_split_size_mb : 512 ,roundup_power2_divisions:[256:1, >:4]"),
            (std::vector<std::string>{"max_split_size_mb", ":", "512", ",", "roundup_power2_divisions", ":", "[",
                                      "256", ":", "1", ",", ">", ":", "4", "]"}));
  EXPECT_TRUE(TokenizeAllocConf("  ").empty());
}

TEST(AllocConfItems, KeysAndWholeValuesInOrder) {
  std::vector<AllocConfItem> items =
      AllocConfItems("max_split_size_mb: 512 , ,roundup_power2_divisions:[256:1,>:4],expandable_segments,");
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0], (AllocConfItem{"max_split_size_mb", "512"}));
  EXPECT_EQ(items[1], (AllocConfItem{"roundup_power2_divisions", "[256:1,>:4]"}));
  EXPECT_EQ(items[2], (AllocConfItem{"expandable_segments", std::nullopt}));
  EXPECT_EQ(items[0].Text(), "max_split_size_mb:512");
  EXPECT_EQ(items[1].Text(), "roundup_power2_divisions:[256:1,>:4]");
  EXPECT_EQ(items[2].Text(), "expandable_segments");
  EXPECT_TRUE(AllocConfItems("").empty());
  EXPECT_EQ(AllocConfItems("a:1,a:2").size(), 2u) << "a repeated key stays: the last wins in PyTorch";
}

}  // namespace
}  // namespace gpuctl::train
