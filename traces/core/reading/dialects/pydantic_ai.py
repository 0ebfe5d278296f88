"""pydantic-ai's retry prompt: the one tool result it sends that means "the call failed".

pydantic-ai answers a tool call whose arguments failed validation, or whose tool raised
`ModelRetry`, with a `RetryPromptPart`; on the wire it is an ordinary tool result
(Chat `role:"tool"`, a Gemini `functionResponse`, a Bedrock `toolResult`) whose text
always ends with the sentence below. No API has an error flag for it, so this closing
sentence, written by pydantic-ai itself (`RetryPromptPart.model_response`), is the flag.
"""

from __future__ import annotations

RETRY_SUFFIX = "Fix the errors and try again."


def is_retry_prompt(text: str) -> bool:
    """Whether a tool result's text is a pydantic-ai retry prompt."""
    return text.rstrip().endswith(RETRY_SUFFIX)
