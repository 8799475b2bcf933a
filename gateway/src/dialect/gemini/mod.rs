//! Google's Gemini `generateContent` dialect (Gemini API and Vertex AI): chat completions
//! requests translated to it, its answers, streams and embeddings back. (Being written.)
