//! AWS Bedrock's Converse dialect: chat completions requests translated to Converse, its
//! answers and ConverseStream's binary event stream back. (Being written.)
