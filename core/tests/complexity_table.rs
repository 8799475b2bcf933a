//! The classifier's specification under the default settings: a labelled table of prompts
//! (greetings, factual questions, code, debugging, design, proofs, multi-step tasks) with the tier
//! and score LiteLLM's own heuristic classifier gives them (`ComplexityRouter.classify`,
//! litellm 1.110.2, default `ComplexityRouterConfig`), recorded by running it on these prompts.

use pointwork_core::complexity::{classify, Classifier, ClassifierSettings, Tier};

use Tier::{Complex, Medium, Reasoning, Simple};

/// (prompt, LiteLLM's tier, LiteLLM's score)
#[rustfmt::skip]
const TABLE: &[(&str, Tier, f64)] = &[
    (r#"hello"#, Simple, -0.15),
    (r#"Hi there!"#, Simple, -0.15),
    (r#"hey, how are you?"#, Simple, -0.15),
    (r#"Thanks a lot!"#, Simple, -0.15),
    (r#"thank you so much for the help"#, Simple, -0.15),
    (r#"goodbye"#, Simple, -0.15),
    (r#"bye for now"#, Simple, -0.15),
    (r#"okay, got it"#, Simple, -0.15),
    (r#"Good morning"#, Simple, -0.1),
    (r#"Hello, can you help me today?"#, Simple, -0.15),
    (r#"What is the capital of France?"#, Simple, -0.15),
    (r#"Who was the first president of the United States?"#, Simple, -0.15),
    (r#"When did World War II end?"#, Simple, -0.15),
    (r#"Where is Mount Everest?"#, Simple, -0.15),
    (r#"How many legs does a spider have?"#, Simple, -0.15),
    (r#"How much does a blue whale weigh?"#, Simple, -0.15),
    (r#"Define photosynthesis."#, Simple, -0.15),
    (r#"What's the boiling point of water in Fahrenheit?"#, Simple, -0.15),
    (r#"Give me a brief summary of the French Revolution."#, Simple, -0.15),
    (r#"Yes or no: is the Earth round?"#, Simple, -0.15),
    (r#"True or false: the sun is a star."#, Simple, -0.15),
    (r#"Translate 'good night' into Spanish."#, Simple, -0.1),
    (r#"What is the tallest building in the world and how tall is it?"#, Simple, -0.05),
    (r#"Name three primary colors."#, Simple, -0.1),
    (r#"Who is the author of Pride and Prejudice?"#, Simple, -0.15),
    (r#"Recommend a good science fiction novel for a long flight, something with interesting characters."#, Simple, 0.0),
    (r#"Write a short poem about autumn leaves."#, Simple, -0.15),
    (r#"Summarize the plot of Hamlet in a few sentences for a high school student."#, Simple, 0.0),
    (r#"Write a Python function that reverses a string."#, Medium, 0.2),
    (r#"Write a Python function to merge two sorted lists and return the result"#, Medium, 0.3),
    (r#"Implement a binary search algorithm in Rust."#, Medium, 0.2),
    (r#"How do I import a module in JavaScript?"#, Medium, 0.2),
    (r#"Create a React component that shows a list of users fetched from an API endpoint."#, Medium, 0.3),
    (r#"Write a SQL query to find the top 5 customers by total order amount from the orders table."#, Medium, 0.3),
    (r#"Refactor this class to use async/await instead of callbacks."#, Medium, 0.3),
    (r#"Convert this for loop into a list comprehension: for x in items: out.append(x*2)"#, Simple, 0.0),
    (r#"What does the const keyword do?"#, Simple, 0.05),
    (r#"Write a bash script that renames all .txt files in a folder."#, Simple, 0.0),
    (r#"Explain what a closure is in JavaScript with an example function."#, Medium, 0.3),
    (r#"Implement an LRU cache in Java with O(1) get and put."#, Medium, 0.2),
    (r#"Write a Dockerfile for a Node app that exposes port 3000."#, Simple, 0.05),
    (r#"How do I create a new branch in git and merge it back?"#, Medium, 0.2),
    (r#"Write a TypeScript interface for a user with name, email and optional age."#, Medium, 0.15),
    (r#"Optimize this SQL query, it is slow on a large database: SELECT * FROM orders WHERE customer_id IN (SELECT id FROM customers WHERE country = 'US')"#, Medium, 0.3),
    (r#"I get this error: TypeError: Cannot read properties of undefined (reading 'map'). How do I debug it?"#, Medium, 0.3),
    (r#"My Python script throws a KeyError exception when I access the dict. Why?"#, Medium, 0.3),
    (r#"Why does my Rust code fail to compile with 'borrowed value does not live long enough'?"#, Medium, 0.15),
    (r#"The API request returns a 500 response and I can't figure out why; the endpoint works locally."#, Medium, 0.3),
    (r#"Debug this: def add(a, b): return a - b"#, Medium, 0.2),
    (r#"My Docker container exits immediately after starting, how do I find out why?"#, Medium, 0.15),
    (r#"Kubernetes pod keeps crashing with OOMKilled, memory limits are set to 512Mi. What should I check?"#, Medium, 0.15),
    (r#"Segmentation fault when I run my C program that uses pointers to a struct"#, Simple, 0.0),
    (r#"git commit fails with 'pre-commit hook failed', what does that mean?"#, Medium, 0.3),
    (r#"Our service has high latency under load; CPU is at 90% and memory is fine. The database queries look OK. Where do I start?"#, Medium, 0.275),
    (r#"Design a scalable microservice architecture for an e-commerce platform with authentication, payments and inventory."#, Medium, 0.25),
    (r#"How would you design a distributed rate limiter with low latency and high throughput?"#, Simple, 0.125),
    (r#"Design the database schema for a multi-tenant SaaS application."#, Medium, 0.3),
    (r#"Propose an architecture for a real-time chat system using websocket connections that scales to millions of users."#, Simple, 0.125),
    (r#"What are the tradeoffs between gRPC and HTTP REST for internal service communication, considering performance and latency?"#, Medium, 0.25),
    (r#"Design an authentication and authorization system for a distributed API with encryption of tokens at rest."#, Complex, 0.4),
    (r#"How should we structure a machine learning pipeline that trains a neural network on GPU clusters in parallel?"#, Medium, 0.25),
    (r#"Plan the migration of a monolith to microservices with container orchestration on Kubernetes."#, Medium, 0.275),
    (r#"Compare and contrast event sourcing and CRUD for an order management system."#, Medium, 0.175),
    (r#"Evaluate the pros and cons of using Redis versus Memcached as a cache layer."#, Reasoning, 0.25),
    (r#"Prove that the square root of 2 is irrational."#, Simple, -0.1),
    (r#"Prove step by step that there are infinitely many prime numbers."#, Medium, 0.175),
    (r#"Think carefully and explain your reasoning: if all bloops are razzies and all razzies are lazzies, are all bloops lazzies?"#, Reasoning, 0.25),
    (r#"Let's think step by step about how many ways 8 queens can be placed on a chessboard."#, Reasoning, 0.35),
    (r#"Show your work: what is the derivative of x^3 * sin(x)?"#, Simple, 0.025),
    (r#"Use logical deduction to solve this puzzle: three boxes are mislabeled, you may pick one fruit from one box."#, Medium, 0.175),
    (r#"Think through the implications of raising interest rates on housing prices and break down the effects."#, Reasoning, 0.25),
    (r#"Reason through whether P equals NP would break modern encryption, and explain your reasoning."#, Reasoning, 0.25),
    (r#"Infer the missing number in the sequence 2, 6, 12, 20, 30, ? and conclude the general rule."#, Reasoning, 0.25),
    (r#"Analyze this argument and evaluate whether the conclusion follows logically from the premises."#, Reasoning, 0.25),
    (r#"A bat and a ball cost $1.10 in total. The bat costs $1.00 more than the ball. How much does the ball cost?"#, Simple, -0.05),
    (r#"Prove by induction that the sum of the first n odd numbers is n squared."#, Simple, 0.0),
    (r#"First install the dependencies, then run the tests and finally deploy."#, Simple, 0.015),
    (r#"Step 1: read the file. Step 2: count the words. Step 3: print the result."#, Simple, 0.015),
    (r#"1. Clone the repo 2. Build it 3. Run the benchmark"#, Simple, -0.085),
    (r#"Please do the following: a) summarize the text b) list the key points c) suggest a title"#, Simple, 0.015),
    (r#"First, outline the essay; then write the introduction."#, Simple, -0.085),
    (r#"Write a plan: 1. gather requirements 2. design the API 3. implement the endpoints 4. write tests"#, Medium, 0.315),
    (r#"What time is it in Tokyo? What about London? And New York? And Sydney?"#, Simple, 0.01),
    (r#"Can you help? Is this right? Why not? What now? Who knows?"#, Simple, -0.09),
    (r#"Walk me through setting up a Python virtual environment, installing requests, and writing a script that calls a REST API and handles errors."#, Medium, 0.3),
    (r#"Step by step, explain how to set up CI for a Rust project with caching, then evaluate which caching strategy is best."#, Reasoning, 0.4),
    (r#"I am writing a novel about a detective in 1920s Paris. Can you suggest some plot twists and ways to develop the main character's backstory?"#, Simple, 0.0),
    (r#"Explain how TCP congestion control works and how it affects throughput and latency in high-performance networks."#, Medium, 0.25),
    (r#"What is the difference between a process and a thread, and how does threading relate to concurrency and parallel execution on a multi-core CPU?"#, Medium, 0.2),
    (r#"Write a function in Python that parses a CSV file, validates each row against a schema, and inserts valid rows into a PostgreSQL database with error handling and retries."#, Medium, 0.3),
    (r#"Quick question: what's 2 + 2?"#, Simple, -0.15),
    (r#"Tell me a joke about cats."#, Simple, -0.1),
    (r#"Can you rewrite this paragraph to sound more professional? We are super excited to tell you about our new product that is really cool."#, Simple, 0.0),
    (r#"hi, what is kubernetes?"#, Simple, -0.0),
    (r#"Explain quantum entanglement to a ten year old."#, Simple, -0.1),
    (r#"List the planets of the solar system in order from the sun."#, Simple, -0.1),
    (r#"Implement a Python function that benchmarks memory and CPU usage of our API endpoint under parallel load."#, Complex, 0.425),
    (r#"Refactor the Rust async request handler to improve throughput and reduce latency in the HTTP protocol layer."#, Complex, 0.55),
    (r#"Write a Go (golang) gRPC service that streams database query results over a websocket with authentication."#, Complex, 0.44),
    (r#"Optimize the React app performance: memory leaks in the component tree and slow API responses."#, Complex, 0.425),
    (r#"Debug the Kubernetes deployment: the container's memory grows and CPU throttling hurts latency and throughput."#, Complex, 0.55),
    (r#"Implement distributed tracing in a Java microservice architecture with concurrency-safe threading and encryption."#, Complex, 0.55),
];

fn long_rows() -> [(String, Tier, f64); 2] {
    let design = "The distributed system must handle authentication and encryption. ".repeat(30)
        + "Design the architecture and evaluate the throughput.";
    [(design, Complex, 0.525), ("word ".repeat(2000), Simple, 0.1)]
}

#[test]
fn the_table_is_big_and_covers_every_tier() {
    assert!(TABLE.len() + 2 >= 80);
    for tier in Tier::ALL {
        assert!(TABLE.iter().any(|row| row.1 == tier), "{tier}");
    }
}

#[test]
fn every_prompt_gets_litellms_tier_and_score() {
    let classifier = Classifier::new(ClassifierSettings::default());
    let mut wrong = Vec::new();
    let long = long_rows();
    let rows = TABLE.iter().map(|&(p, t, s)| (p, t, s)).chain(long.iter().map(|(p, t, s)| (p.as_str(), *t, *s)));
    for (prompt, tier, score) in rows {
        let c = classify(prompt, &classifier);
        if c.tier != tier || (c.score - score).abs() > 1e-4 {
            wrong.push(format!("{prompt:?}: got {} {:.4}, LiteLLM {tier} {score}", c.tier, c.score));
        }
    }
    assert!(wrong.is_empty(), "{} of {} disagree:\n{}", wrong.len(), TABLE.len() + 2, wrong.join("\n"));
}
