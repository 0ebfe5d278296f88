"""Log in, log out and change password, with Django's auth views in the app's pages."""

from django.contrib.auth import views as auth_views
from django.urls import path, reverse_lazy

from traces.access.rules import Access, access

app_name = "accounts"

urlpatterns = [
    path(
        "login/",
        access(Access.PUBLIC)(
            auth_views.LoginView.as_view(
                template_name="accounts/login.html", redirect_authenticated_user=True
            )
        ),
        name="login",
    ),
    path("logout/", access(Access.PUBLIC)(auth_views.LogoutView.as_view()), name="logout"),
    path(
        "password/",
        access(Access.ACCOUNT)(
            auth_views.PasswordChangeView.as_view(
                template_name="accounts/password_change.html",
                success_url=reverse_lazy("accounts:password-done"),
            )
        ),
        name="password",
    ),
    path(
        "password/done/",
        access(Access.ACCOUNT)(
            auth_views.PasswordChangeDoneView.as_view(template_name="accounts/password_done.html")
        ),
        name="password-done",
    ),
]
