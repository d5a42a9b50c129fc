"""llama.cpp's OpenAI-compatible server (llama-cpp-python) with a tool-calling chat format for
Gemma 3, registered as `gemma-tools`; started by scripts/real-model.sh (EVAL-7).

Why not the server's own formats: Gemma 3's chat template ignores `tools`, and the server's
`chatml-function-calling` (a) shows the model ChatML markers it was never trained on, (b) drops
every `tool` message, so the model never sees a command's output, (c) constrains a plain-text
answer with the grammar meant for the next call, so no text answer can be written, and (d)
refuses to stream when the model may choose a tool.

This format keeps that server's idea (the model first chooses, under a grammar, between
`message:` and `functions.NAME:`, then writes the message or the call's JSON arguments) and
fixes the four: Gemma's own turn markers, tool results shown as the next user turn, free text
after `message:`, and streaming of both text and call arguments (in fragments, as OpenAI
streams them). One call per reply.

Usage: python real-model-server.py [llama_cpp.server arguments] --chat_format gemma-tools
"""

import json
import sys
import time
import uuid

import llama_cpp.llama_chat_format as chat_format
from llama_cpp import llama_cpp as native
from llama_cpp import llama_grammar

END = "<end_of_turn>"

_default_model_params = native.llama_model_default_params


def _model_params():
    """llama.cpp's defaults without the extra (repacked) weight buffers: their CPU kernels, as
    this llama.cpp builds them with -march=native, stop the process with a general protection
    fault on the first decode on the machines Nomos is developed on (Xeon with AVX-512 and
    AMX); the plain kernels compute the same results."""
    params = _default_model_params()
    params.use_extra_bufts = False
    return params


native.llama_model_default_params = _model_params


def text_of(content):
    """The text of a message's content: a string or a list of text parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def tools_text(tools):
    lines = ["You have access to the following functions:"]
    for tool in tools:
        function = tool["function"]
        lines.append("")
        lines.append(f"functions.{function['name']}: {function.get('description', '')}")
        lines.append("parameters: " + json.dumps(function.get("parameters", {})))
    lines.append("")
    lines.append(
        "Answer with either a message or one function call. For a message, begin with "
        "'message:' and write it on the next line. For a function call, write "
        "'functions.<name>:' and its JSON arguments on the next line."
    )
    return "\n".join(lines)


def render(messages, tools):
    """The conversation in Gemma's turn format, ending with the model's turn opened."""
    preface = [text_of(m.get("content")) for m in messages if m["role"] == "system"]
    if tools:
        preface.append(tools_text(tools))
    preface = "\n\n".join(p for p in preface if p)
    names = {}
    turns = []  # (role, text)

    def add(role, text):
        if turns and turns[-1][0] == role:
            turns[-1] = (role, turns[-1][1] + "\n\n" + text)
        else:
            turns.append((role, text))

    for message in messages:
        role = message["role"]
        if role == "system":
            continue
        if role == "user":
            add("user", text_of(message.get("content")))
        elif role == "assistant":
            parts = []
            content = text_of(message.get("content"))
            if content:
                parts.append(("message:\n" + content) if tools else content)
            for call in message.get("tool_calls") or []:
                function = call["function"]
                names[call.get("id")] = function["name"]
                parts.append(f"functions.{function['name']}:\n{function.get('arguments', '{}')}")
            add("model", "\n".join(parts))
        elif role == "tool":
            name = names.get(message.get("tool_call_id"), "the function")
            add("user", f"Result of {name}:\n{text_of(message.get('content'))}")
    if preface:
        if turns and turns[0][0] == "user":
            turns[0] = ("user", preface + "\n\n" + turns[0][1])
        else:
            turns.insert(0, ("user", preface))
    prompt = "".join(f"<start_of_turn>{role}\n{text}{END}\n" for role, text in turns)
    return prompt + "<start_of_turn>model\n"


def literal(text):
    return json.dumps(text)


class Reply:
    """Ids, usage and chunk shapes of one chat completion."""

    def __init__(self, model):
        self.id = "chatcmpl-" + uuid.uuid4().hex
        self.created = int(time.time())
        self.model = model
        self.prompt_tokens = 0
        self.completion_tokens = 0

    def count(self, completion):
        usage = completion.get("usage") or {}
        self.prompt_tokens += usage.get("prompt_tokens", 0)
        self.completion_tokens += usage.get("completion_tokens", 0)

    def usage(self):
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }

    def whole(self, message, finish_reason):
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}
            ],
            "usage": self.usage(),
        }

    def streamed(self, llama, prompt, pieces):
        """Counts a streamed completion: llama.cpp's stream carries no usage, so the
        prompt (when no other call counted it) is tokenized and each piece is a token."""
        if self.prompt_tokens == 0:
            self.prompt_tokens = len(llama.tokenize(prompt.encode("utf-8"), special=True))
        self.completion_tokens += pieces

    def usage_chunk(self):
        """The last chunk of a stream, as OpenAI sends it for `include_usage`."""
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [],
            "usage": self.usage(),
        }

    def chunk(self, delta, finish_reason=None):
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [
                {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
            ],
        }


@chat_format.register_chat_completion_handler("gemma-tools")
def gemma_tools(
    llama,
    messages,
    tools=None,
    tool_choice=None,
    temperature=0.2,
    top_p=0.95,
    top_k=40,
    min_p=0.05,
    stream=False,
    stop=None,
    max_tokens=None,
    repeat_penalty=1.1,
    model=None,
    seed=None,
    **_ignored,
):
    tools = tools or []
    if tool_choice == "none":
        tools = []
    names = [t["function"]["name"] for t in tools]
    prompt = render(messages, tools)
    reply = Reply(model or llama.model_path)
    sampling = dict(
        temperature=temperature,
        top_p=top_p,
        top_k=top_k,
        min_p=min_p,
        repeat_penalty=repeat_penalty,
        seed=seed,
    )
    stops = [END] + ([stop] if isinstance(stop, str) else list(stop or []))

    choice = "message"
    if tools:
        # The choice between a message and each function, under a grammar.
        choices = " | ".join(literal(f"functions.{name}:") for name in names)
        grammar = llama_grammar.LlamaGrammar.from_string(
            f'root ::= "message:" | {choices}\n', verbose=llama.verbose
        )
        decision = llama.create_completion(
            prompt=prompt, grammar=grammar, max_tokens=32, stream=False, **sampling
        )
        reply.count(decision)
        choice = decision["choices"][0]["text"].strip()

    if choice.startswith("functions."):
        name = choice[len("functions.") : -1]
        tool = next(t for t in tools if t["function"]["name"] == name)
        prompt += f"{choice}\n{{"
        call_id = "call_" + uuid.uuid4().hex[:24]
        # The arguments are written freely, on one line, with no grammar: llama.cpp checks a
        # grammar against every token of Gemma's 262k-token vocabulary, several seconds a
        # token on two cores. What the model writes goes to Nomos as it came, malformed or
        # not (Nomos answers a malformed call with what was wrong).
        completion = llama.create_completion(
            prompt=prompt,
            max_tokens=max_tokens,
            stop=stops + ["\n"],
            stream=stream,
            **sampling,
        )
        if not stream:
            reply.count(completion)
            arguments = "{" + completion["choices"][0]["text"]
            call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
            return reply.whole(
                {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
            )

        def call_chunks():
            yield reply.chunk({"role": "assistant", "content": None})
            yield reply.chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name, "arguments": "{"},
                        }
                    ]
                }
            )
            pieces = 0
            for piece in completion:
                text = piece["choices"][0]["text"]
                pieces += bool(text)
                if text:
                    yield reply.chunk(
                        {"tool_calls": [{"index": 0, "function": {"arguments": text}}]}
                    )
            yield reply.chunk({}, "tool_calls")
            reply.streamed(llama, prompt, pieces)
            yield reply.usage_chunk()

        return call_chunks()

    if tools:
        prompt += "message:\n"
        # A small model goes on with another `message:` or a call after its answer: the
        # answer ends there (a call must be chosen under the grammar, not written in text).
        stops += ["\nmessage:", "\nfunctions."]
    completion = llama.create_completion(
        prompt=prompt, max_tokens=max_tokens, stop=stops, stream=stream, **sampling
    )
    if not stream:
        reply.count(completion)
        finish_reason = completion["choices"][0].get("finish_reason") or "stop"
        return reply.whole(
            {"role": "assistant", "content": completion["choices"][0]["text"].strip()},
            finish_reason,
        )

    def text_chunks():
        yield reply.chunk({"role": "assistant", "content": ""})
        finish_reason = "stop"
        pieces = 0
        for piece in completion:
            text = piece["choices"][0]["text"]
            pieces += bool(text)
            if text:
                yield reply.chunk({"content": text})
            finish_reason = piece["choices"][0].get("finish_reason") or finish_reason
        yield reply.chunk({}, finish_reason)
        reply.streamed(llama, prompt, pieces)
        yield reply.usage_chunk()

    return text_chunks()


if __name__ == "__main__":
    from llama_cpp.server.__main__ import main

    sys.argv[0] = "llama_cpp.server"
    main()
